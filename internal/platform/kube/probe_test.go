package kube

import (
	"fmt"
	"testing"

	"github.com/meshbench/meshbench/internal/load"
	"github.com/meshbench/meshbench/internal/mesh"
	"github.com/meshbench/meshbench/internal/platform"
	"github.com/meshbench/meshbench/internal/topology"
)

func TestJudgeProbe(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		expect probeKind
		codes  map[int]int64
		errs   int64
		kinds  map[string]int64 // errs by kind; default all resets
		pass   bool
	}{
		{name: "control answered", expect: expectSuccess, codes: map[int]int64{200: 5}, pass: true},
		{name: "control all failed", expect: expectSuccess, errs: 5},
		{name: "plaintext reset", expect: expectRefused, errs: 5, pass: true},
		{name: "plaintext got through once", expect: expectRefused, codes: map[int]int64{200: 1}, errs: 4},
		{name: "refused but nothing sent", expect: expectRefused},
		{name: "plaintext closed or TLS failure", expect: expectRefused, errs: 5, kinds: map[string]int64{load.KindClosed: 3, load.KindTLS: 1, load.KindRefused: 1}, pass: true},
		// A default-deny NetworkPolicy and no mesh: the plaintext call times
		// out, which is no evidence of mTLS.
		{name: "network policy drops plaintext", expect: expectRefused, errs: 5, kinds: map[string]int64{load.KindTimeout: 5}},
		{name: "one timeout among resets", expect: expectRefused, errs: 5, kinds: map[string]int64{load.KindReset: 4, load.KindTimeout: 1}},
		{name: "no DNS", expect: expectRefused, errs: 5, kinds: map[string]int64{load.KindDNS: 5}},
		{name: "an HTTP error is an answer", expect: expectRefused, codes: map[int]int64{503: 5}},
		{name: "L7 denied", expect: expectForbidden, codes: map[int]int64{403: 5}, pass: true},
		{name: "L7 reset is not a policy answer", expect: expectForbidden, errs: 5},
		{name: "L7 one allowed", expect: expectForbidden, codes: map[int]int64{403: 4, 200: 1}},
		// Linkerd's plaintext: its proxy answers HTTP with 403, refuses the rest.
		{name: "denied by 403", expect: expectDenied, codes: map[int]int64{403: 5}, pass: true},
		{name: "denied by 403 and resets", expect: expectDenied, codes: map[int]int64{403: 3}, errs: 2, pass: true},
		{name: "denied, but one answered", expect: expectDenied, codes: map[int]int64{403: 4, 200: 1}},
		{name: "denied is not a timeout", expect: expectDenied, errs: 5, kinds: map[string]int64{load.KindTimeout: 5}},
		{name: "denied is not a 503", expect: expectDenied, codes: map[int]int64{503: 5}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := testResult(t, tc.codes, tc.errs)
			r.ErrorKinds = tc.kinds
			if tc.kinds == nil {
				r.ErrorKinds = map[string]int64{load.KindReset: tc.errs}
			}
			c := judgeProbe(probe{Check: "c", What: "w", Expect: tc.expect}, r, nil)
			if c.Pass != tc.pass {
				t.Errorf("pass = %v, want %v (%s)", c.Pass, tc.pass, c.Detail)
			}
		})
	}
}

// TestRefusalNeedsControl: a refusal counts only beside a control call
// that succeeded.
func TestRefusalNeedsControl(t *testing.T) {
	t.Parallel()
	ps := []probe{{Check: controlCheck}, {Check: mesh.CheckPlaintextRefused, Control: controlCheck}}
	for _, control := range []bool{true, false} {
		checks := withControls(ps, []mesh.Check{{Name: controlCheck, Pass: control}, {Name: mesh.CheckPlaintextRefused, Pass: true}})
		if checks[1].Pass != control {
			t.Errorf("control passed %v: plaintext-refused passed %v (%s)", control, checks[1].Pass, checks[1].Detail)
		}
	}
}

func TestProbesPerProfile(t *testing.T) {
	t.Parallel()
	g, err := topology.Builtin("tiered")
	if err != nil {
		t.Fatal(err)
	}
	p := &kubePlatform{workload: &platform.Workload{Graph: g, Namespaces: 1}, namespaces: topology.Namespaces(1)}
	tests := []struct {
		profile string
		ingress bool
		want    []string
	}{
		{mesh.ProfileBaseline, false, nil},
		{mesh.ProfileBaseline, true, []string{"ingress-routes"}},
		{mesh.ProfileSidecar, false, []string{"meshed-call-succeeds", "plaintext-refused"}},
		{mesh.ProfileSidecar, true, []string{"meshed-call-succeeds", "plaintext-refused", "ingress-routes"}},
		{mesh.ProfileLinkerd, false, []string{"meshed-call-succeeds", "plaintext-refused"}},
		{mesh.ProfileAmbient, false, []string{"meshed-call-succeeds", "plaintext-refused"}},
		{mesh.ProfileAmbientL4Policy, false, []string{"meshed-call-succeeds", "plaintext-refused", "policy-denies-identity"}},
		{mesh.ProfileWaypointL7Policy, false, []string{"meshed-call-succeeds", "plaintext-refused", "policy-denies-identity", "policy-denies-path"}},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%s/ingress=%v", tc.profile, tc.ingress), func(t *testing.T) {
			t.Parallel()
			ps := p.probes(meshPlan{Profile: mustProfile(t, tc.profile), Ingress: tc.ingress})
			if len(ps) != len(tc.want) {
				t.Fatalf("%d probes, want %v", len(ps), tc.want)
			}
			for i, pb := range ps {
				if pb.Check != tc.want[i] {
					t.Errorf("probe %d = %s, want %s", i, pb.Check, tc.want[i])
				}
			}
			for _, pb := range ps {
				url := pb.Job.Load.URL
				switch pb.Check {
				case "plaintext-refused":
					// A sidecar mesh's plaintext probe runs in a meshed pod,
					// past its proxy, beside a control from the same pod;
					// the others' from the unmeshed namespace.
					pr := mustProfile(t, tc.profile)
					switch {
					case pr.ProxyUID != 0 && (pb.Job.Namespace != "ns-1" || pb.Job.UID != pr.ProxyUID || pb.Job.Control == nil || pb.Job.Control.URL != url):
						t.Errorf("plaintext probe runs in %s as UID %d with control %v, want ns-1 as %d beside a control of %s",
							pb.Job.Namespace, pb.Job.UID, pb.Job.Control, pr.ProxyUID, url)
					case (pb.Expect == expectDenied) != (pr.Mesh == mesh.Linkerd):
						t.Errorf("plaintext probe expects %v: only Linkerd's may be denied with a 403", pb.Expect)
					case pr.ProxyUID == 0 && (pb.Job.Namespace != probeNamespace || pb.Job.UID != 0 || pb.Job.Control != nil):
						t.Errorf("plaintext probe runs in %s as UID %d, want the unmeshed %s as the image's user", pb.Job.Namespace, pb.Job.UID, probeNamespace)
					}
				case "policy-denies-identity":
					if pb.Job.ServiceAccount != probeServiceAccount {
						t.Errorf("identity probe runs as %s", pb.Job.ServiceAccount)
					}
				case "policy-denies-path":
					if want := "http://tier-1-app-a.ns-1:8080/admin/denied"; url != want || pb.Job.ServiceAccount != loadServiceAccount {
						t.Errorf("path probe asks %s as %s, want %s as %s", url, pb.Job.ServiceAccount, want, loadServiceAccount)
					}
				case "ingress-routes":
					want := "http://meshbench-ingress.meshbench-ingress:80/ns-1/"
					if mustProfile(t, tc.profile).Mesh == "istio" {
						want = "http://istio-ingressgateway.istio-system:80/ns-1/"
					}
					if url != want || pb.Job.Namespace != outsideNamespace {
						t.Errorf("ingress probe asks %s from %s, want %s from %s", url, pb.Job.Namespace, want, outsideNamespace)
					}
				}
			}
		})
	}
}
