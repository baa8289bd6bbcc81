package envoycfg

// RBACRules is an RBAC policy set: ALLOW admits what a policy matches and
// denies the rest; an empty ALLOW set denies everything.
type RBACRules struct {
	Action   string            `json:"action"`
	Policies map[string]Policy `json:"policies"`
}

// Policy pairs the permissions (what) with the principals (who).
type Policy struct {
	Permissions []Permission `json:"permissions"`
	Principals  []Principal  `json:"principals"`
}

// Permission matches an action; Any matches every one.
type Permission struct {
	Any      bool           `json:"any,omitempty"`
	URLPath  *PathMatcher   `json:"url_path,omitempty"`
	NotRule  *Permission    `json:"not_rule,omitempty"`
	AndRules *PermissionSet `json:"and_rules,omitempty"`
}

// PermissionSet is a list of permissions to combine.
type PermissionSet struct {
	Rules []Permission `json:"rules"`
}

// PathMatcher matches the request path.
type PathMatcher struct {
	Path StringMatcher `json:"path"`
}

// Principal matches the downstream: its authenticated certificate
// identity, or a filter state value set upstream of an internal listener.
type Principal struct {
	Authenticated *AuthenticatedMatch `json:"authenticated,omitempty"`
	FilterState   *FilterStateMatch   `json:"filter_state,omitempty"`
}

// AuthenticatedMatch matches the peer certificate's URI SAN (principal).
type AuthenticatedMatch struct {
	PrincipalName StringMatcher `json:"principal_name"`
}

// FilterStateMatch matches a string filter state object.
type FilterStateMatch struct {
	Key         string        `json:"key"`
	StringMatch StringMatcher `json:"string_match"`
}

// NetworkRBAC is the L4 RBAC network filter.
func NetworkRBAC(statPrefix string, rules RBACRules) Extension {
	return Ext("envoy.filters.network.rbac", "envoy.extensions.filters.network.rbac.v3.RBAC",
		map[string]any{"stat_prefix": statPrefix, "rules": rules})
}

// HTTPRBAC is the L7 RBAC HTTP filter.
func HTTPRBAC(rules RBACRules) Extension {
	return Ext("envoy.filters.http.rbac", "envoy.extensions.filters.http.rbac.v3.RBAC", map[string]any{"rules": rules})
}
