package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/meshbench/meshbench/internal/predict"
)

// writeProfile writes a small profile: a sidecar mesh measured over HTTP
// at 50 and 8000 B, every hop adding 1 ms.
func writeProfile(t *testing.T) string {
	t.Helper()
	hop := predict.FromQuantile(func(float64) float64 { return 1 })
	iv := predict.Interval{V: 0.0001, Lo: 0.0001, Hi: 0.0001}
	costs := []predict.Cost{{Protocol: "http", Payload: 50, Sides: predict.Sides{Server: iv}}, {Protocol: "http", Payload: 8000, Sides: predict.Sides{Server: iv}}}
	p := &predict.UnitCosts{
		Version: predict.FormatVersion, Source: "test", Protocols: []string{"http"}, Payloads: []int{50, 8000}, Reference: "http", Nodes: 1,
		Meshes: []predict.Mesh{{Name: "sidecar", Profile: "sidecar",
			Roles: []predict.Role{{Role: "sidecar", Scope: predict.ScopePod, Instances: 3, Fits: []predict.Fit{{From: 10, To: 100, Costs: costs}}}},
			Hops:  []predict.Hop{{Protocol: "http", Payload: 50, Added: hop, Low: hop, High: hop}, {Protocol: "http", Payload: 8000, Added: hop, Low: hop, High: hop}}}},
	}
	path := filepath.Join(t.TempDir(), "profile.json")
	if err := p.Write(path); err != nil {
		t.Fatal(err)
	}
	return path
}

func runArgs(args ...string) (string, error) {
	var out bytes.Buffer
	err := Run(context.Background(), Streams{In: strings.NewReader(""), Out: &out, ErrOut: &bytes.Buffer{}}, args)
	return out.String(), err
}

func TestPredictFlags(t *testing.T) {
	t.Parallel()
	prof := writeProfile(t)
	out, err := runArgs("predict", "--profile", prof, "--graph", "tiered", "--namespaces", "4", "--rate", "50", "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	var pr predict.Prediction
	if err := json.Unmarshal([]byte(out), &pr); err != nil {
		t.Fatal(err)
	}
	if pr.Scale.Namespaces != 4 || pr.Scale.Rate != 50 || pr.Scale.Connections != 32 || len(pr.Meshes) != 1 || pr.Meshes[0].P50.V != 3 || pr.Validated == "" {
		t.Errorf("prediction = %+v", pr)
	}
	out, err = runArgs("predict", "--profile", prof, "--graph", "tiered", "--rate", "50")
	if err != nil || !strings.Contains(out, "Added p50 ms") || !strings.Contains(out, "Validated: ") {
		t.Errorf("text: err %v, out:\n%s", err, out)
	}
	out, err = runArgs("predict", "--profile", prof, "--graph", "tiered", "--rate", "50", "-o", "html")
	if err != nil || !strings.HasPrefix(out, `<section id="prediction">`) {
		t.Errorf("html: err %v, out:\n%s", err, out)
	}
}

func TestPredictErrors(t *testing.T) {
	t.Parallel()
	prof := writeProfile(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--graph", "tiered", "--rate", "5"}, "--profile is required"},
		{[]string{"--profile", prof, "--rate", "5"}, "--graph is required"},
		{[]string{"--profile", prof, "--graph", "tiered"}, "--rate 0"},
		{[]string{"--profile", prof, "--graph", "tiered", "--rate", "5", "-o", "xml"}, `"xml" for "-o, --output" flag: want text, json, html`},
		{[]string{"--profile", prof, "--graph", "nope.yaml", "--rate", "5"}, "--graph: graph \"nope.yaml\""},
		{[]string{"--profile", filepath.Join(t.TempDir(), "none.json"), "--graph", "tiered", "--rate", "5"}, "none.json: no such file or directory"},
		{[]string{"--profile", prof, "--graph", "tiered", "--rate", "5", "--namespaces", "0"}, "--namespaces 0"},
		// boutique speaks gRPC, which the profile did not measure.
		{[]string{"--profile", prof, "--graph", "boutique", "--rate", "5"}, "protocol grpc is not covered"},
	} {
		_, err := runArgs(append([]string{"predict"}, c.args...)...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: err = %v, want %q", c.args, err, c.want)
		}
	}
}

func TestProfileRefusesADirectoryWithoutResults(t *testing.T) {
	t.Parallel()
	if _, err := runArgs("profile", t.TempDir()); err == nil {
		t.Error("profile of an empty directory: no error")
	}
}
