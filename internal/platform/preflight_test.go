package platform

import (
	"strings"
	"testing"
)

func TestProblems(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   []Finding
		want string // "" for no error
	}{
		{"all ok", []Finding{{Check: "root", OK: true, Detail: "root"}}, ""},
		{"one line per failure with its fix", []Finding{
			{Check: "root", OK: true, Detail: "root"},
			{Check: "envoy", Detail: "no Envoy", Fix: "run scripts/setup.sh"},
			{Check: "disk", Detail: "1 MiB free"},
		}, "preflight failed (see meshbench doctor):\n  envoy: no Envoy; fix: run scripts/setup.sh\n  disk: 1 MiB free"},
		{"an advisory failure is a warning, not a problem", []Finding{
			{Check: "root", OK: true, Detail: "root"},
			{Check: "contention", Advisory: true, Detail: "the hypervisor took 20%"},
		}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := Problems(tc.in)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("Problems = %v, want nil", err)
				}
				return
			}
			if err == nil || err.Error() != tc.want {
				t.Fatalf("Problems = %v, want %q", err, tc.want)
			}
		})
	}
}

func TestWarnings(t *testing.T) {
	t.Parallel()
	fs := []Finding{
		{Check: "root", OK: true},
		{Check: "contention", Advisory: true, OK: true},
		{Check: "envoy", Detail: "no Envoy"},
		{Check: "contention", Advisory: true, Detail: "the hypervisor took 20%"},
	}
	w := Warnings(fs)
	if len(w) != 1 || w[0].Detail != "the hypervisor took 20%" {
		t.Errorf("warnings %+v, want only the failed advisory finding", w)
	}
}

func TestDiskFinding(t *testing.T) {
	t.Parallel()
	dir := t.TempDir() + "/not/yet/made"
	if f := DiskFinding(dir, 1); !f.OK || !strings.Contains(f.Detail, "MiB free under ") {
		t.Errorf("DiskFinding(1 byte) = %+v, want OK", f)
	}
	if f := DiskFinding(dir, 1<<62); f.OK || f.Fix == "" || !strings.Contains(f.Detail, "want ") {
		t.Errorf("DiskFinding(4 EiB) = %+v, want a failure with a fix", f)
	}
}
