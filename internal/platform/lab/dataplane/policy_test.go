package dataplane

import (
	"slices"
	"testing"
)

func TestAllowedPrincipalsFollowTheGraph(t *testing.T) {
	t.Parallel()
	v := newView(fixture())
	tests := []struct {
		name    string
		service string
		want    []string
	}{
		{name: "entry admits load generators and the gateway", service: "tier-1-app-a",
			want: []string{SPIFFEID("istio-system", "istio-ingressgateway-service-account"), SPIFFEID("ns-1", "loadgen")}},
		{name: "tier 2 admits tier 1", service: "tier-2-app-a", want: []string{SPIFFEID("ns-1", "tier-1-app-a")}},
		{name: "tier 3 admits both tier 2s", service: "tier-3-app-a",
			want: []string{SPIFFEID("ns-1", "tier-2-app-a"), SPIFFEID("ns-1", "tier-2-app-b")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := v.allowedPrincipals(v.service("ns-1", tt.service))
			if !slices.Equal(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestRulesWithoutPrincipalsDenyAll(t *testing.T) {
	t.Parallel()
	s := &Service{Namespace: "ns-1", Name: "lonely"}
	for name, r := range map[string]int{"l4": len(l4Rules(s, nil).Policies), "l7": len(l7Rules(s, nil, true).Policies)} {
		if r != 0 {
			t.Errorf("%s: %d policies for nobody; an ALLOW with none denies all", name, r)
		}
	}
	r := l7Rules(s, []string{SPIFFEID("ns-1", "a")}, true)
	p := r.Policies[policyName(s)]
	if r.Action != "ALLOW" || len(p.Principals) != 1 || p.Principals[0].FilterState == nil || p.Principals[0].FilterState.Key != peerPrincipalKey {
		t.Errorf("waypoint rule does not read the peer from filter state: %+v", r)
	}
	rules := p.Permissions[0].AndRules.Rules
	if len(rules) != 2 || rules[1].NotRule == nil || rules[1].NotRule.URLPath.Path.Prefix != deniedPathPrefix {
		t.Errorf("path rule: %+v", rules)
	}
}
