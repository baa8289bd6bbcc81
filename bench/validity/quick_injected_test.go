package main

import (
	"os"
	"strings"
	"testing"
)

// TestQuickInjectedIsQuick checks that the injected pairs' study is the
// quick preset but for the sidecar's injected_work, so that a change to
// the preset cannot leave the pairs comparing two different studies.
func TestQuickInjectedIsQuick(t *testing.T) {
	body := func(path string) string {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		s := string(b)
		i := strings.Index(s, "apiVersion:")
		if i < 0 {
			t.Fatalf("%s: no apiVersion", path)
		}
		return s[i:]
	}
	quick := body("../../internal/study/presets/quick.yaml")
	injected := body("quick-injected.yaml")
	var kept, work []string
	for _, l := range strings.Split(injected, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "injected_work:") {
			work = append(work, l)
			continue
		}
		kept = append(kept, l)
	}
	if len(work) != 1 {
		t.Fatalf("quick-injected.yaml sets injected_work %d times, want once (the sidecar)", len(work))
	}
	if strings.Join(kept, "\n") != quick {
		t.Error("quick-injected.yaml differs from internal/study/presets/quick.yaml beyond injected_work: copy the preset again and add the sidecar's injected_work")
	}
}
