package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/meshbench/meshbench/internal/analysis"
	"github.com/meshbench/meshbench/internal/results/resultstest"
)

// A study holding the sidecar under both configurations reports their
// parity, with intervals, what the relay changed, and istiod's usage as
// the control plane; without the twin there is no parity section.
func TestParitySection(t *testing.T) {
	t.Parallel()
	for _, twin := range []bool{true, false} {
		dir := t.TempDir()
		if _, err := resultstest.Write(dir, resultstest.Options{Seed: 6, Requests: 3000, IstiodTwin: twin}); err != nil {
			t.Fatal(err)
		}
		d, err := analysis.Load(dir, analysis.Options{})
		if err != nil {
			t.Fatal(err)
		}
		b := &builder{d: d, colour: meshColours(d)}
		s := b.parity()
		if !twin {
			if len(s.Blocks) != 0 {
				t.Errorf("parity without an istiod mesh: %+v", s.Blocks)
			}
			if strings.Contains(strings.Join(b.banner(), " "), "control_plane istiod") {
				t.Error("the banner names istiod without an istiod mesh")
			}
			continue
		}
		if len(s.Blocks) != 1 || s.Blocks[0].Table == nil || len(s.Blocks[0].Table.Rows) != 1 {
			t.Fatalf("parity section: %+v, want one table of one pair", s.Blocks)
		}
		r := s.Blocks[0].Table.Rows[0]
		if r[0] != "sidecar" || r[1] != resultstest.Sidecar || r[2] != resultstest.SidecarIstiod {
			t.Errorf("pair %q", r[:3])
		}
		for i, h := range s.Blocks[0].Table.Header[3:8] {
			if !strings.Contains(r[3+i], " [") {
				t.Errorf("%s: %q, want a figure with its interval", h, r[3+i])
			}
		}
		if !strings.Contains(r[8], "istio.metadata_exchange") {
			t.Errorf("relay changes %q", r[8])
		}
		// The fixture's data plane costs the same per request under both
		// configurations: no measurable difference.
		if p := d.Parities(d.Representative())[0]; p.CPUPerRequest.Lo > 1 || p.CPUPerRequest.Hi < 1 {
			t.Errorf("CPU per request ratio %+v, want an interval across 1", p.CPUPerRequest)
		}
		if !strings.Contains(strings.Join(b.banner(), " "), resultstest.SidecarIstiod+" (control_plane istiod)") {
			t.Errorf("the banner does not name the istiod mesh: %q", b.banner())
		}
		// SMP: istiod's usage in mesh_control_plane, and its labels say
		// istiod configured the sidecars.
		var buf bytes.Buffer
		if err := WriteSMP(&buf, d); err != nil {
			t.Fatal(err)
		}
		var x smpExport
		if err := json.Unmarshal(buf.Bytes(), &x); err != nil {
			t.Fatal(err)
		}
		found := false
		for _, m := range x.MeshConfigs {
			if m.Labels["meshbench.mesh"] != resultstest.SidecarIstiod {
				if strings.Contains(m.Labels["meshbench.dataplane"], "istiod") {
					t.Errorf("%s exported as configured by istiod: %q", m.Labels["meshbench.mesh"], m.Labels["meshbench.dataplane"])
				}
				continue
			}
			found = true
			if m.MeshControlPlane == nil || m.MeshControlPlane.CPUMcores <= 0 || m.MeshControlPlane.MemMB <= 0 ||
				!strings.Contains(m.Labels["meshbench.dataplane"], "configured by istiod v0.0.0-") {
				t.Errorf("istiod mesh exported as %+v, control plane %+v", m.Labels, m.MeshControlPlane)
			}
		}
		if !found {
			t.Error("no SMP mesh config for the istiod mesh")
		}
	}
}
