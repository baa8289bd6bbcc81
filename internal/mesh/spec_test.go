package mesh

import "testing"

func TestFailedChecks(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		checks []Check
		want   string
	}{
		{"none", nil, ""},
		{"all pass", []Check{{Name: "a", Pass: true}}, ""},
		{"some fail", []Check{
			{Name: "pods-meshed", Pass: false, Detail: "ns-1/x has no proxy"},
			{Name: "mtls", Pass: true},
			{Name: "policy-denies", Pass: false, Detail: "200 from ns-1/load"},
		}, "pods-meshed: ns-1/x has no proxy; policy-denies: 200 from ns-1/load"},
	}
	for _, tt := range tests {
		if got := FailedChecks(tt.checks); got != tt.want {
			t.Errorf("%s: FailedChecks = %q, want %q", tt.name, got, tt.want)
		}
	}
}
