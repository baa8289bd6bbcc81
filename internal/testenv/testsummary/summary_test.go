package main

import (
	"bytes"
	"strings"
	"testing"
)

// ev builds one `go test -json` line.
func ev(action, pkg, test, output string) string {
	s := `{"Action":"` + action + `","Package":"` + pkg + `"`
	if test != "" {
		s += `,"Test":"` + test + `"`
	}
	if output != "" {
		s += `,"Output":` + quote(output)
	}
	return s + "}\n"
}

func quote(s string) string {
	return `"` + strings.NewReplacer(`"`, `\"`, "\n", `\n`).Replace(s) + `"`
}

func TestSummary(t *testing.T) {
	t.Parallel()
	passing := ev("run", "m/a", "TestIntegrationUp", "") +
		ev("output", "m/a", "TestIntegrationUp", "=== RUN   TestIntegrationUp\n") +
		ev("pass", "m/a", "TestIntegrationUp", "") +
		ev("pass", "m/a", "TestUnit", "") +
		ev("pass", "m/a", "", "")
	skipped := ev("output", "m/b", "TestIntegrationEnvoy", "    envoy_test.go:9: missing prerequisite: Envoy\n") +
		ev("output", "m/b", "TestIntegrationEnvoy", "--- SKIP: TestIntegrationEnvoy (0.00s)\n") +
		ev("skip", "m/b", "TestIntegrationEnvoy", "") +
		ev("pass", "m/b", "", "")
	failed := ev("output", "m/c", "TestIntegrationMesh/sub", "    mesh_test.go:5: missing prerequisite: root\n") +
		ev("fail", "m/c", "TestIntegrationMesh/sub", "") +
		ev("fail", "m/c", "TestIntegrationMesh", "") +
		ev("output", "m/c", "", "FAIL\n") +
		ev("fail", "m/c", "", "")
	missing := ev("output", "m/e", "TestIntegrationLab", "    lab_test.go:3: missing prerequisite: root (MESHBENCH_REQUIRE_INTEGRATION=1: a missing prerequisite fails)\n") +
		ev("fail", "m/e", "TestIntegrationLab", "") + ev("fail", "m/e", "", "")
	tests := []struct {
		name     string
		in       string
		strict   bool
		wantErr  bool
		wantRows []string
		wantMsgs []string
	}{
		{name: "all pass", in: passing, wantRows: []string{"m/a    ", "total"}},
		{name: "skip allowed", in: passing + skipped, wantRows: []string{"m/b"}},
		{name: "skip strict", in: passing + skipped, strict: true, wantErr: true,
			wantMsgs: []string{"SKIPPED m/b TestIntegrationEnvoy: envoy_test.go:9: missing prerequisite: Envoy", "MESHBENCH_REQUIRE_INTEGRATION=1"}},
		{name: "failure", in: passing + failed, wantErr: true,
			wantMsgs: []string{"FAILED  m/c TestIntegrationMesh"}},
		{name: "missing prerequisite, strict", in: passing + missing, strict: true, wantErr: true,
			wantMsgs: []string{"COULD NOT RUN m/e TestIntegrationLab: lab_test.go:3: missing prerequisite: root"}},
		{name: "package failed without a test", in: ev("output", "m/d", "", "panic: boom\n") + ev("fail", "m/d", "", ""), wantErr: true,
			wantMsgs: []string{"FAILED  package m/d", "no integration test ran"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newSummary()
			var progress, out bytes.Buffer
			if err := s.read(strings.NewReader(tc.in), &progress); err != nil {
				t.Fatal(err)
			}
			err := s.report(&out, tc.strict)
			if (err != nil) != tc.wantErr {
				t.Errorf("report error %v, want error %v\n%s", err, tc.wantErr, out.String())
			}
			for _, w := range append(tc.wantRows, tc.wantMsgs...) {
				if !strings.Contains(out.String(), w) {
					t.Errorf("summary lacks %q:\n%s", w, out.String())
				}
			}
		})
	}
}

// The row counts are what the events say.
func TestSummaryCounts(t *testing.T) {
	t.Parallel()
	in := ev("pass", "m/a", "TestIntegrationA", "") + ev("fail", "m/a", "TestIntegrationB", "") +
		ev("skip", "m/a", "TestIntegrationC", "") + ev("pass", "m/a", "TestIntegrationA/sub", "") +
		ev("pass", "m/a", "TestOther", "")
	s := newSummary()
	if err := s.read(strings.NewReader(in), &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	if c := s.byPkg["m/a"]; c == nil || *c != (counts{passed: 1, failed: 1, skipped: 1}) {
		t.Errorf("counts %+v, want 1 passed, 1 failed, 1 skipped (subtests and other tests not counted)", c)
	}
}
