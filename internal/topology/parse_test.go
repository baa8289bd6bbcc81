package topology

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestParseValid(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("testdata/valid-*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no valid testdata: %v", err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			t.Parallel()
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			g, err := Parse(data)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			// Marshal then Parse must give the same graph, so that a
			// platform can hand the graph to `meshbench app --graph FILE`.
			out, err := g.Marshal()
			if err != nil {
				t.Fatal(err)
			}
			again, err := Parse(out)
			if err != nil {
				t.Fatalf("Parse(Marshal()): %v\n%s", err, out)
			}
			if !reflect.DeepEqual(g, again) {
				t.Errorf("round trip changed the graph:\n%s", out)
			}
		})
	}
}

func TestParseDefaultsAndOverrides(t *testing.T) {
	t.Parallel()
	g, err := Load("testdata/valid-full.yaml")
	if err != nil {
		t.Fatal(err)
	}
	front, back := g.Service("front"), g.Service("back")
	if front.Port != 9000 || back.Port != DefaultPort || back.Replicas != 1 || back.ServiceAccount != "back" {
		t.Errorf("defaults: front port %d, back port %d replicas %d sa %q", front.Port, back.Port, back.Replicas, back.ServiceAccount)
	}
	if g.EntryPath != "/shop" || front.CPUWork.D().Microseconds() != 200 {
		t.Errorf("entry_path %q, cpu_work %s", g.EntryPath, front.CPUWork)
	}
	if c := front.Script[0].Call; c.Count != 3 || c.Probability != 0.5 {
		t.Errorf("call = %+v", c)
	}
	if got := front.Script[1].Parallel; len(got) != 2 || got[0].Service != "back" || got[1].Service != "store" {
		t.Errorf("parallel shorthand = %+v", got)
	}
	if g.EntryProtocol != ProtocolGRPC {
		t.Errorf("entry_protocol = %q", g.EntryProtocol)
	}
	// back is called over http (the default) and grpc: two edges.
	want := []Edge{{"back", ProtocolHTTP}, {"store", ProtocolH2C}, {"back", ProtocolGRPC}}
	if got := g.Edges("front"); !reflect.DeepEqual(got, want) {
		t.Errorf("Edges(front) = %v, want %v", got, want)
	}
	if front.Resources.Requirements().CPULimitMilli != 1000 || front.Resources.Requirements().MemRequestBytes != 64<<20 {
		t.Errorf("resources = %+v", front.Resources)
	}
}

func TestParseInvalid(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		want string
	}{
		{"unknown-downstream", `services[2].script[0].call.service: unknown service "x"`},
		{"duplicate-name", `services[1].name: duplicate service "a"`},
		{"negative-replicas", `services[0].replicas: must not be negative`},
		{"missing-entry", `entry: required`},
		{"unknown-entry", `entry: unknown service "z"`},
		{"negative-count", `services[0].script[0].parallel[1].count: must not be negative`},
		{"probability", `services[0].script[0].call.probability: must be between 0 and 1`},
		{"cycle", `call cycle a -> b -> a`},
		{"quantity", `services[0].resources.memory_request: quantity "500MB"`},
		{"request-over-limit", `services[0].resources.cpu_request: 2 exceeds cpu_limit 700m`},
		{"unknown-field", `unknown field "replica"`},
		{"duration", `want a duration such as "30s"`},
		{"negative-latency", `services[0].latency: must not be negative`},
		{"step-both", `services[0].script[0]: has both call and parallel`},
		{"duplicate-version", `services[0].versions[1].name: duplicate version "v1"`},
		{"bad-name", `services[0].name: "A_1" is not a valid service name`},
		{"port", `services[0].port: 70000 is not a port`},
		{"protocol", `services[0].script[0].call.protocol: unknown protocol "http3"`},
		{"entry-protocol", `entry_protocol: unknown protocol "tcp"`},
		{"too-many-replicas", `line 5:13: services[0].replicas: 300 pods behind one service, more than the 250`},
		{"version-replicas", `line 6:3: services[0].versions: 400 pods behind one service, more than the 250`},
		{"response-size", `line 5:18: services[0].response_size: 2000000000 bytes, more than the 1073741824`},
		{"count", `line 6:31: services[0].script[0].call.count: 5000, more than the 1000`},
		{"calls-per-request", `line 4:8: entry: one request makes 10100 calls downstream, more than the 1000`},
		{"downstream-answer", `line 9:18: services[1].response_size: b answers at least 20000000 bytes, more than the 16777216`},
		{"cpu-work", `line 5:13: services[0].cpu_work: 2h0m0s, more than the 1m0s`},
	}
	files, _ := filepath.Glob("testdata/invalid-*.yaml")
	if len(files) != len(tests) {
		t.Errorf("%d invalid-*.yaml files but %d cases: every file needs a case", len(files), len(tests))
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			data, err := os.ReadFile("testdata/invalid-" + tt.name + ".yaml")
			if err != nil {
				t.Fatal(err)
			}
			_, err = Parse(data)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Parse error = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

func TestLoadUnknown(t *testing.T) {
	t.Parallel()
	_, err := Load("no-such-graph")
	if err == nil || !strings.Contains(err.Error(), "neither a built-in") {
		t.Errorf("Load error = %v", err)
	}
}
