package lab

import (
	"context"
	"net"
	"strings"
	"testing"

	"github.com/meshbench/meshbench/internal/platform/lab/cluster"
)

// The data planes dial their probes from the lab's namespaces only: an
// empty namespace, which DialIn takes as the host's own, is refused as the
// lab's runner refuses it, and nothing connects to a listener on the host.
func TestDialRefusesTheHostNamespace(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan struct{}, 1)
	go func() {
		if c, err := ln.Accept(); err == nil {
			accepted <- struct{}{}
			c.Close()
		}
	}()
	c := &meshCluster{l: &cluster.Lab{}}
	for _, ns := range []string{"", "other-n-app"} {
		conn, err := c.Dial(context.Background(), ns, ln.Addr().String())
		if err == nil {
			conn.Close()
		}
		if err == nil || !strings.Contains(err.Error(), "is not one of lab") {
			t.Errorf("dial from network namespace %q: %v; want it refused", ns, err)
		}
	}
	select {
	case <-accepted:
		t.Error("a probe connected from the host's network namespace")
	default:
	}
}
