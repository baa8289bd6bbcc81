package mesh

import "testing"

// TestProxiesPerCall: a call passes the caller's and the callee's
// sidecars, or both node proxies, plus a waypoint where the profile has
// one; Cilium and the baseline pass none.
func TestProxiesPerCall(t *testing.T) {
	t.Parallel()
	for profile, want := range map[string]int{ProfileBaseline: 0, ProfileSidecar: 2, ProfileSidecarL7Policy: 2, ProfileLinkerd: 2,
		ProfileAmbient: 2, ProfileAmbientL4Policy: 2, ProfileAmbientWaypoint: 3, ProfileWaypointL7Policy: 3, ProfileCilium: 0} {
		p, ok := LookupProfile(profile)
		if !ok {
			t.Fatalf("no profile %s", profile)
		}
		if n, which := p.ProxiesPerCall(); n != want || which == "" {
			t.Errorf("%s: %d proxies per call (%q), want %d", profile, n, which, want)
		}
	}
}
