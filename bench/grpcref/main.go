// Command grpcref is the minimal grpc-go server the benchmarks measure
// against: it serves the test service's gRPC method (grpcapp.Method) with
// grpc-go's own server and transport, answering a fixed payload of -size
// bytes and nothing else. bench/app/run.sh sets the app's gRPC cost beside
// it; bench/load drives it to compare gRPC clients.
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"google.golang.org/grpc"

	"github.com/meshbench/meshbench/internal/grpcapp"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:0", "address to serve on")
	size := flag.Int("size", 2700, "answer size in bytes")
	flag.Parse()
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		fmt.Fprintln(os.Stderr, "grpcref:", err)
		os.Exit(1)
	}
	body := []byte(strings.Repeat("x", *size))
	s := grpc.NewServer()
	grpcapp.Register(s, func(context.Context) ([]byte, int) { return body, http.StatusOK })
	fmt.Println(ln.Addr().String()) // the caller reads where it listens
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() { <-ctx.Done(); s.Stop() }()
	if err := s.Serve(ln); err != nil {
		fmt.Fprintln(os.Stderr, "grpcref:", err)
		os.Exit(1)
	}
}
