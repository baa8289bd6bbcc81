package platform

import (
	"strings"
	"testing"
)

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

func TestNameNodes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		nodes []NodeSpec
		want  []string
	}{
		{"roles only", []NodeSpec{{Role: NodeApp}, {Role: NodeLoad}, {Role: NodeApp}}, []string{"app-1", "load-1", "app-2"}},
		{"named kept", []NodeSpec{{Name: "front", Role: NodeApp}, {Role: NodeApp}}, []string{"front", "app-2"}},
		{"none", nil, nil},
	}
	for _, tt := range tests {
		NameNodes(tt.nodes)
		var got []string
		for _, n := range tt.nodes {
			got = append(got, n.Name)
		}
		if strings.Join(got, ",") != strings.Join(tt.want, ",") {
			t.Errorf("%s: names %v, want %v", tt.name, got, tt.want)
		}
	}
}
