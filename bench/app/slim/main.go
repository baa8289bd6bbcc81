// Command slim runs one app service with nothing else linked in, so that
// bench/app/run.sh can tell the app's own memory from what the rest of the
// meshbench binary's package initialisation adds.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/meshbench/meshbench/internal/app"
	"github.com/meshbench/meshbench/internal/topology"
)

func main() {
	var o app.Options
	graph := flag.String("graph", "", "built-in graph name or YAML file")
	flag.StringVar(&o.Service, "service", "", "service to run")
	flag.StringVar(&o.Listen, "listen", "", "address to serve on")
	o.Upstreams = map[string]string{}
	flag.Func("upstream", "NAME=HOST:PORT (repeatable)", func(v string) error {
		name, addr, ok := strings.Cut(v, "=")
		if !ok {
			return fmt.Errorf("want NAME=HOST:PORT")
		}
		o.Upstreams[name] = addr
		return nil
	})
	flag.Parse()
	g, err := topology.Load(*graph)
	if err == nil {
		o.Graph = g
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		app.TuneRuntime(app.DefaultGCPercent)
		err = app.Run(ctx, o)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "slim:", err)
		os.Exit(1)
	}
}
