package dataplane

import (
	"fmt"
	"sort"

	"github.com/meshbench/meshbench/internal/platform/lab/dataplane/envoycfg"
)

// The mesh's own pods live in Istio's namespace with Istio's accounts.
const (
	systemNamespace  = "istio-system"
	ingressAccount   = "istio-ingressgateway-service-account"
	waypointAccount  = "waypoint"
	deniedPathPrefix = "/admin/" // the L7 rule's forbidden paths
)

// ingressIdentity is the ingress gateway's SPIFFE ID.
var ingressIdentity = SPIFFEID(systemNamespace, ingressAccount)

// allowedPrincipals derives a Service's ALLOW list from the graph, as the
// 50-tenant study wrote its AuthorizationPolicies: each service admits
// the identities of its callers; the entry admits the load generators
// and the ingress gateway.
func (v *view) allowedPrincipals(s *Service) []string {
	ids := identities(v.callerPods(s))
	if s.Entry {
		ids = append(ids, ingressIdentity)
	}
	sort.Strings(ids)
	return ids
}

// policyName is how Istio names the RBAC policy of an AuthorizationPolicy
// rule: ns[<ns>]-policy[<name>]-rule[0].
func policyName(s *Service) string {
	return fmt.Sprintf("ns[%s]-policy[%s]-rule[0]", s.Namespace, s.Name)
}

// l4Rules is an L4 AuthorizationPolicy (ALLOW from principals), as a
// destination ztunnel enforces it: on the mTLS peer's identity.
func l4Rules(s *Service, principals []string) envoycfg.RBACRules {
	var ids []envoycfg.Principal
	for _, p := range principals {
		ids = append(ids, envoycfg.Principal{Authenticated: &envoycfg.AuthenticatedMatch{PrincipalName: envoycfg.StringMatcher{Exact: p}}})
	}
	return allowRules(s, []envoycfg.Permission{{Any: true}}, ids)
}

// l7Rules add a path rule to the principals: ALLOW callers on paths
// outside /admin/ (an AuthorizationPolicy with `paths: ["/*"]` and
// `notPaths: ["/admin/*"]`). byFilterState reads the principal from the
// filter state a waypoint's HBONE termination set, as Istio's waypoints
// do, instead of from the connection's own peer certificate.
func l7Rules(s *Service, principals []string, byFilterState bool) envoycfg.RBACRules {
	var ids []envoycfg.Principal
	for _, p := range principals {
		m := envoycfg.StringMatcher{Exact: p}
		if byFilterState {
			ids = append(ids, envoycfg.Principal{FilterState: &envoycfg.FilterStateMatch{Key: peerPrincipalKey, StringMatch: m}})
		} else {
			ids = append(ids, envoycfg.Principal{Authenticated: &envoycfg.AuthenticatedMatch{PrincipalName: m}})
		}
	}
	paths := envoycfg.Permission{AndRules: &envoycfg.PermissionSet{Rules: []envoycfg.Permission{
		{URLPath: &envoycfg.PathMatcher{Path: envoycfg.StringMatcher{Prefix: "/"}}},
		{NotRule: &envoycfg.Permission{URLPath: &envoycfg.PathMatcher{Path: envoycfg.StringMatcher{Prefix: deniedPathPrefix}}}},
	}}}
	return allowRules(s, []envoycfg.Permission{paths}, ids)
}

// allowRules is an ALLOW policy; with no principals it denies everything,
// as an ALLOW AuthorizationPolicy that matches nobody does.
func allowRules(s *Service, perms []envoycfg.Permission, ids []envoycfg.Principal) envoycfg.RBACRules {
	r := envoycfg.RBACRules{Action: "ALLOW", Policies: map[string]envoycfg.Policy{}}
	if len(ids) > 0 {
		r.Policies[policyName(s)] = envoycfg.Policy{Permissions: perms, Principals: ids}
	}
	return r
}

// Filter state keys Istio's waypoint stores the HBONE peer's identity and
// the CONNECT authority under.
const (
	peerPrincipalKey    = "io.istio.peer_principal"
	connectAuthorityKey = "io.istio.connect_authority"
)
