package kube

import (
	"strings"
	"testing"
)

func TestCorefileDomain(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ corefile, want string }{
		{".:53 {\n    errors\n    kubernetes cluster.local in-addr.arpa ip6.arpa {\n       pods insecure\n    }\n}\n", "cluster.local"},
		{".:53 {\n    kubernetes corp.internal. in-addr.arpa {\n    }\n}\n", "corp.internal"},
		{".:53 {\n    kubernetes {\n    }\n}\n", ""},
		{"", ""},
	} {
		if got := corefileDomain(tc.corefile); got != tc.want {
			t.Errorf("corefileDomain(%q) = %q, want %q", tc.corefile, got, tc.want)
		}
	}
}

// TestIngressUsesClusterDomain: the gateways address the entry Services in
// the cluster's own domain.
func TestIngressUsesClusterDomain(t *testing.T) {
	t.Parallel()
	cfg := plainIngressConfig([]string{"ns-1"}, "productpage", 9080, "corp.internal")
	if !strings.Contains(cfg, "productpage.ns-1.svc.corp.internal") || strings.Contains(cfg, "cluster.local") {
		t.Errorf("plain gateway config does not address productpage.ns-1.svc.corp.internal:\n%s", cfg)
	}
	vs := istioIngressRoutes([]string{"ns-1"}, "productpage", 9080, "corp.internal")
	if b, _ := vs[len(vs)-1].MarshalJSON(); !strings.Contains(string(b), "productpage.ns-1.svc.corp.internal") {
		t.Errorf("VirtualService does not route to productpage.ns-1.svc.corp.internal: %s", b)
	}
}
