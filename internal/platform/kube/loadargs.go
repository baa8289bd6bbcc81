package kube

import (
	"fmt"

	"github.com/meshbench/meshbench/internal/load"
)

// loadArgs is the command line of `meshbench load` for options, writing
// its full JSON result to stdout and nothing else but errors to stderr.
func loadArgs(o load.Options) []string {
	args := []string{"load", "--quiet", "--output", "json", "--connections", fmt.Sprint(o.Connections)}
	if o.Rate > 0 {
		args = append(args, "--rate", fmt.Sprint(o.Rate))
	}
	if o.Duration > 0 {
		args = append(args, "--duration", o.Duration.String())
	}
	if o.Requests > 0 {
		args = append(args, "--requests", fmt.Sprint(o.Requests))
	}
	if o.Warmup > 0 {
		args = append(args, "--warmup", o.Warmup.String())
	}
	if o.Timeout > 0 {
		args = append(args, "--timeout", o.Timeout.String())
	}
	if o.Method != "" {
		args = append(args, "--method", o.Method)
	}
	for name, values := range o.Header {
		for _, v := range values {
			args = append(args, "--header", name+": "+v)
		}
	}
	if len(o.Body) > 0 {
		args = append(args, "--body", string(o.Body))
	}
	if o.NoKeepAlive {
		args = append(args, "--no-keepalive")
	}
	if o.HTTP2 {
		args = append(args, "--http2")
	}
	if o.GRPC {
		args = append(args, "--grpc")
	}
	return append(args, o.URL)
}
