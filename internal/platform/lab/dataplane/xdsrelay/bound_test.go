package xdsrelay

import (
	"fmt"
	"log/slog"
	"strings"
	"testing"
)

// A proxy that rejects every update, with long messages, cannot grow the
// relay's record without bound: it keeps the first 64 rejections, in
// order, each message cut at 2 KiB, and counts them all.
func TestRejectionsBounded(t *testing.T) {
	t.Parallel()
	r, err := New(Options{Istiod: "127.0.0.1:1", Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Stop()
	msg := func(i int) string { return fmt.Sprintf("%04d", i) + strings.Repeat("x", 64<<10) }
	for i := range 5000 {
		r.nack(nodeID, listenerType, msg(i))
	}
	rj := r.Rejections()
	if len(rj) != 64 {
		t.Errorf("%d rejections kept of 5000, want the first 64", len(rj))
	}
	if n := r.Rejected(); n != 5000 {
		t.Errorf("counted %d rejections, want 5000", n)
	}
	for i, x := range rj {
		if want := msg(i)[:2<<10] + "..."; x.Message != want {
			t.Fatalf("rejection %d kept as %.12q (%d bytes), want its message's first 2 KiB and \"...\"", i, x.Message, len(x.Message))
		}
	}
}
