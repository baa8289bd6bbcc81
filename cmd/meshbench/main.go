// Command meshbench measures what a service mesh costs: latency, throughput,
// CPU, memory and money. All logic lives in internal/cli.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/meshbench/meshbench/internal/cli"
)

// stopSignals end a command cleanly: Ctrl-C, a termination request, and
// the hang-up of a dropped terminal or ssh session.
var stopSignals = []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), stopSignals...)
	go func() {
		// A second signal exits at once, without waiting for clean-up.
		<-ctx.Done()
		stop()
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, stopSignals...)
		<-sig
		os.Exit(130)
	}()
	os.Exit(cli.Main(ctx, cli.Streams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}, os.Args[1:]))
}
