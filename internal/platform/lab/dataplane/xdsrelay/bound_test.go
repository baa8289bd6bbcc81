package xdsrelay

import (
	"log/slog"
	"strings"
	"testing"
)

// A proxy that rejects every update, with long messages, cannot grow the
// relay's record without bound: it keeps the first rejections, each
// message cut short.
func TestRejectionsBounded(t *testing.T) {
	t.Parallel()
	r, err := New(Options{Istiod: "127.0.0.1:1", Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Stop()
	msg := strings.Repeat("x", 64<<10)
	for range 5000 {
		r.nack(nodeID, listenerType, msg)
	}
	rj := r.Rejections()
	if len(rj) == 0 || len(rj) > 100 {
		t.Errorf("%d rejections kept of 5000, want between 1 and 100", len(rj))
	}
	if n := r.Rejected(); n != 5000 {
		t.Errorf("counted %d rejections, want 5000", n)
	}
	for _, x := range rj {
		if len(x.Message) > maxRejectionMessage+len("...") {
			t.Fatalf("a rejection's message kept at %d bytes", len(x.Message))
		}
	}
}
