package load

import (
	"maps"
	"slices"
	"strconv"
)

// Args is the command line of `meshbench load`, the binary's name left
// out, that generates o and writes its full result as JSON to stdout and
// only errors to stderr. Every option travels, the timeout even when 0
// (no timeout, where the command's default is 30s). A body travels as
// the file bodyFile, which the caller fills with o.Body: argv cannot
// carry every byte.
func Args(o Options, bodyFile string) []string {
	a := []string{"load", "--quiet", "--output", "json", "--connections", strconv.Itoa(o.Connections),
		"--timeout", o.Timeout.String()}
	if o.Rate > 0 {
		a = append(a, "--rate", strconv.FormatFloat(o.Rate, 'f', -1, 64))
	}
	if o.Arrivals != "" {
		a = append(a, "--arrivals", o.Arrivals)
	}
	if o.Seed != 0 {
		a = append(a, "--seed", strconv.FormatUint(o.Seed, 10))
	}
	if o.Duration > 0 {
		a = append(a, "--duration", o.Duration.String())
	}
	if o.Requests > 0 {
		a = append(a, "--requests", strconv.FormatInt(o.Requests, 10))
	}
	if o.Warmup > 0 {
		a = append(a, "--warmup", o.Warmup.String())
	}
	if o.WarmupMax > 0 {
		a = append(a, "--warmup-max", o.WarmupMax.String())
	}
	if o.NoKeepAlive {
		a = append(a, "--no-keepalive")
	}
	if o.ConnRequests > 0 {
		a = append(a, "--conn-requests", strconv.Itoa(o.ConnRequests))
	}
	if o.HTTP2 {
		a = append(a, "--http2")
	}
	if o.GRPC {
		a = append(a, "--grpc")
	}
	if o.Insecure {
		a = append(a, "--insecure")
	}
	if o.Method != "" {
		a = append(a, "--method", o.Method)
	}
	for _, name := range slices.Sorted(maps.Keys(o.Header)) {
		for _, v := range o.Header[name] {
			a = append(a, "--header", name+": "+v)
		}
	}
	if len(o.Body) > 0 {
		a = append(a, "--body-file", bodyFile)
	}
	if o.BodySize > 0 {
		a = append(a, "--body-size", strconv.FormatInt(o.BodySize, 10))
	}
	return append(a, o.URL)
}
