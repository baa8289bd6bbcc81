package dataplane

import (
	"flag"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files")

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Errorf("%s differs (go test -run %s -update to accept):\n%s", name, t.Name(), got)
	}
}

func TestCaptureRules(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		rules []byte
	}{
		// Istio's golden for these istio-init flags is
		// tools/istio-iptables/pkg/capture/testdata/inbound-ports-wildcard.golden,
		// plus the -d exclusions and the final ISTIO_REDIRECT jump.
		{name: "sidecar.iptables", rules: sidecarRules()},
		{name: "ambient.iptables", rules: ambientRules([]netip.Addr{netip.MustParseAddr("10.244.1.2"), netip.MustParseAddr("10.244.1.3")})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			golden(t, tt.name, tt.rules)
		})
	}
}

func TestCaptureRemovalIsTolerant(t *testing.T) {
	t.Parallel()
	for name, c := range map[string]capture{
		"sidecar": sidecarCapture("pod"),
		"ambient": ambientCapture("node", []netip.Addr{netip.MustParseAddr("10.244.1.2")}),
	} {
		for _, cm := range c.Remove {
			// Deleting a jump or a route that a partial install never made
			// must not stop the rest of the removal; dropping the chains
			// declares them first, so it cannot fail on a missing one.
			deletes := cm.Args[0] == "ip" || slices.Contains(cm.Args, "-D")
			if deletes != cm.Tolerant {
				t.Errorf("%s: %v tolerant=%v", name, cm.Args, cm.Tolerant)
			}
			if cm.Stdin != nil && !strings.Contains(string(cm.Stdin), "-X ") {
				t.Errorf("%s: restore without chain removal: %s", name, cm.Stdin)
			}
		}
	}
}
