package kube

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/meshbench/meshbench/internal/infra"
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
		// samePod: the probe's control is a second container of its pod.
		samePod bool
		codes   map[int]int64
		errs    int64
		kinds   map[string]int64 // errs by kind; default all resets
		pass    bool
	}{
		{name: "control answered", expect: expectSuccess, codes: map[int]int64{200: 5}, pass: true},
		{name: "control all failed", expect: expectSuccess, errs: 5},
		{name: "plaintext reset", expect: expectRefused, errs: 5, pass: true},
		{name: "plaintext got through once", expect: expectRefused, codes: map[int]int64{200: 1}, errs: 4},
		{name: "refused but nothing sent", expect: expectRefused},
		{name: "plaintext closed or TLS failure", expect: expectRefused, errs: 5, kinds: map[string]int64{load.KindClosed: 3, load.KindTLS: 1, load.KindReset: 1}, pass: true},
		// Refused at connect: a network that rejects, or no listener,
		// unless a control in the same pod was answered.
		{name: "refused at connect, control elsewhere", expect: expectRefused, errs: 5, kinds: map[string]int64{load.KindRefused: 5}},
		{name: "one refused at connect among resets, control elsewhere", expect: expectRefused, errs: 5, kinds: map[string]int64{load.KindReset: 4, load.KindRefused: 1}},
		{name: "refused at connect, control in the same pod", expect: expectRefused, samePod: true, errs: 5, kinds: map[string]int64{load.KindRefused: 5}, pass: true},
		// A default-deny NetworkPolicy and no mesh: the plaintext call times
		// out, which is no evidence of mTLS.
		{name: "network policy drops plaintext", expect: expectRefused, errs: 5, kinds: map[string]int64{load.KindTimeout: 5}},
		{name: "network policy drops plaintext, same pod", expect: expectRefused, samePod: true, errs: 5, kinds: map[string]int64{load.KindTimeout: 5}},
		{name: "one timeout among resets", expect: expectRefused, errs: 5, kinds: map[string]int64{load.KindReset: 4, load.KindTimeout: 1}},
		{name: "no DNS", expect: expectRefused, errs: 5, kinds: map[string]int64{load.KindDNS: 5}},
		{name: "an HTTP error is an answer", expect: expectRefused, codes: map[int]int64{503: 5}},
		{name: "L7 denied", expect: expectForbidden, codes: map[int]int64{403: 5}, pass: true},
		{name: "L7 reset is not a policy answer", expect: expectForbidden, errs: 5},
		{name: "L7 one allowed", expect: expectForbidden, codes: map[int]int64{403: 4, 200: 1}},
		// Linkerd's plaintext: its proxy answers HTTP with 403, refuses the rest.
		{name: "denied by 403", expect: expectDenied, samePod: true, codes: map[int]int64{403: 5}, pass: true},
		{name: "denied by 403 and resets", expect: expectDenied, samePod: true, codes: map[int]int64{403: 3}, errs: 2, pass: true},
		{name: "denied by 403 and refused at connect", expect: expectDenied, samePod: true, codes: map[int]int64{403: 3}, errs: 2, kinds: map[string]int64{load.KindRefused: 2}, pass: true},
		{name: "denied, but one answered", expect: expectDenied, samePod: true, codes: map[int]int64{403: 4, 200: 1}},
		{name: "denied is not a timeout", expect: expectDenied, samePod: true, errs: 5, kinds: map[string]int64{load.KindTimeout: 5}},
		{name: "denied is not a 503", expect: expectDenied, samePod: true, codes: map[int]int64{503: 5}},
		// Cilium's outsider: its policy drops, so every request times out.
		{name: "outsider dropped", expect: expectDropped, errs: 5, kinds: map[string]int64{load.KindTimeout: 5}, pass: true},
		{name: "outsider refused is not a drop", expect: expectDropped, errs: 5, kinds: map[string]int64{load.KindRefused: 5}},
		{name: "outsider answered once", expect: expectDropped, codes: map[int]int64{200: 1}, errs: 4, kinds: map[string]int64{load.KindTimeout: 4}},
		{name: "outsider sent nothing", expect: expectDropped},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := testResult(t, tc.codes, tc.errs)
			r.ErrorKinds = tc.kinds
			if tc.kinds == nil {
				r.ErrorKinds = map[string]int64{load.KindReset: tc.errs}
			}
			pb := probe{Check: "c", What: "w", Expect: tc.expect}
			var control *load.Result
			if tc.samePod {
				pb.Job.Control = &load.Options{}
				control = testResult(t, map[int]int64{200: 5}, 0)
			}
			c := judgeProbe(pb, r, control)
			if c.Pass != tc.pass {
				t.Errorf("pass = %v, want %v (%s)", c.Pass, tc.pass, c.Detail)
			}
		})
	}
}

// TestRefusalNeedsControl: a refusal counts only beside a control call
// that succeeded, and the check says which control judged it.
func TestRefusalNeedsControl(t *testing.T) {
	t.Parallel()
	at := func(ns, node string) jobSpec { return jobSpec{Namespace: ns, Node: node} }
	samePod := at("ns-1", "n1")
	samePod.Control = &load.Options{}
	tests := []struct {
		name    string
		job     jobSpec
		beside  string
		control bool
	}{
		{name: "same pod", job: samePod, beside: "its own pod's meshed GET (same pod)"},
		{name: "neighbour", job: at("ns-1", "n1"), beside: "from a neighbour (same namespace ns-1 and node n1)"},
		{name: "another namespace", job: at(probeNamespace, "n1"), beside: "from namespace ns-1, not a neighbour"},
		{name: "another node", job: at("ns-1", "n2"), beside: "from namespace ns-1, not a neighbour"},
		{name: "no node pinned", job: at("ns-1", ""), beside: "from namespace ns-1, not a neighbour"},
	}
	for _, tc := range tests {
		for _, control := range []bool{true, false} {
			ps := []probe{{Check: controlCheck, Job: at("ns-1", "n1")}, {Check: mesh.CheckPlaintextRefused, Control: controlCheck, Job: tc.job}}
			checks := withControls(ps, []mesh.Check{{Name: controlCheck, Pass: control}, {Name: mesh.CheckPlaintextRefused, Pass: true}})
			if checks[1].Pass != control || !strings.Contains(checks[1].Detail, "judged beside") || !strings.Contains(checks[1].Detail, tc.beside) {
				t.Errorf("%s, control passed %v: plaintext-refused passed %v (%s), want %v judged beside %q", tc.name, control, checks[1].Pass, checks[1].Detail, control, tc.beside)
			}
			if checks[0].Detail != "" {
				t.Errorf("%s: the control's own detail %q", tc.name, checks[0].Detail)
			}
		}
	}
	lone := withControls([]probe{{Check: mesh.CheckPlaintextRefused, Control: controlCheck}}, []mesh.Check{{Name: mesh.CheckPlaintextRefused, Pass: true}})
	if lone[0].Pass {
		t.Errorf("a refusal without its control passed: %s", lone[0].Detail)
	}
}

func TestProbesPerProfile(t *testing.T) {
	t.Parallel()
	g, err := topology.Builtin("tiered")
	if err != nil {
		t.Fatal(err)
	}
	p := &kubePlatform{workload: &platform.Workload{Graph: g, Namespaces: 1}, namespaces: topology.Namespaces(1),
		nodes: map[infra.NodeRole][]string{infra.NodeLoad: {"mb-load-1", "mb-load-2"}, infra.NodeApp: {"mb-app-1"}}}
	tests := []struct {
		profile string
		ingress bool
		want    []string
	}{
		{mesh.ProfileBaseline, false, nil},
		{mesh.ProfileBaseline, true, []string{"ingress-routes"}},
		{mesh.ProfileSidecar, false, []string{"meshed-call-succeeds", "plaintext-refused"}},
		{mesh.ProfileSidecar, true, []string{"meshed-call-succeeds", "plaintext-refused", "ingress-routes"}},
		{mesh.ProfileSidecarL7Policy, false, []string{"meshed-call-succeeds", "plaintext-refused", "policy-denies-identity", "policy-denies-path"}},
		{mesh.ProfileLinkerd, false, []string{"meshed-call-succeeds", "plaintext-refused"}},
		{mesh.ProfileAmbient, false, []string{"meshed-call-succeeds", "plaintext-refused"}},
		{mesh.ProfileAmbientWaypoint, false, []string{"meshed-call-succeeds", "plaintext-refused"}},
		{mesh.ProfileAmbientL4Policy, false, []string{"meshed-call-succeeds", "plaintext-refused", "policy-denies-identity"}},
		{mesh.ProfileWaypointL7Policy, false, []string{"meshed-call-succeeds", "plaintext-refused", "policy-denies-identity", "policy-denies-path"}},
		{mesh.ProfileCilium, false, []string{"meshed-call-succeeds", checkPolicyDropsOutsiders}},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%s/ingress=%v", tc.profile, tc.ingress), func(t *testing.T) {
			t.Parallel()
			pr := mustProfile(t, tc.profile)
			ps := p.probes(meshPlan{Profile: pr, Ingress: tc.ingress})
			if len(ps) != len(tc.want) {
				t.Fatalf("%d probes, want %v", len(ps), tc.want)
			}
			for i, pb := range ps {
				if pb.Check != tc.want[i] {
					t.Errorf("probe %d = %s, want %s", i, pb.Check, tc.want[i])
				}
			}
			var control probe
			for _, pb := range ps {
				// Every probe on one node: the first load node.
				if pb.Job.Node != "mb-load-1" {
					t.Errorf("%s runs on node %q, want mb-load-1", pb.Check, pb.Job.Node)
				}
				if pb.Check == controlCheck {
					control = pb
				}
			}
			for _, pb := range ps {
				url := pb.Job.Load.URL
				switch pb.Check {
				case "plaintext-refused":
					switch {
					case pr.ProxyUID != 0:
						// A sidecar mesh's plaintext probe runs in a meshed
						// pod, past its proxy, beside a control from the
						// same pod.
						if pb.Job.Namespace != "ns-1" || pb.Job.UID != pr.ProxyUID || pb.Job.Control == nil || pb.Job.Control.URL != url {
							t.Errorf("plaintext probe runs in %s as UID %d with control %v, want ns-1 as %d beside a control of %s",
								pb.Job.Namespace, pb.Job.UID, pb.Job.Control, pr.ProxyUID, url)
						}
					case pr.NodeProxies():
						// Ambient's: the control's neighbour, left out of
						// ambient by one label.
						assertNeighbour(t, pb, control, map[string]string{labelDataplane: dataplaneNone})
						if pb.Job.ServiceAccount != control.Job.ServiceAccount {
							t.Errorf("plaintext probe runs as %s, its control as %s", pb.Job.ServiceAccount, control.Job.ServiceAccount)
						}
					default:
						t.Errorf("profile %s has a plaintext-refused probe; only sidecar, Linkerd and ambient meshes refuse plaintext", tc.profile)
					}
					if (pb.Expect == expectDenied) != (pr.Mesh == mesh.Linkerd) {
						t.Errorf("plaintext probe expects %v: only Linkerd's may be denied with a 403", pb.Expect)
					}
					if pb.Control != controlCheck {
						t.Errorf("plaintext probe judged beside %q", pb.Control)
					}
				case checkPolicyDropsOutsiders:
					// Cilium's, which no pod of a namespace escapes: an
					// outsider's call, which its policy drops.
					if pb.Job.Namespace != probeNamespace || pb.Job.UID != 0 || pb.Job.Control != nil || len(pb.Job.Labels) != 0 ||
						pb.Expect != expectDropped || pb.Control != controlCheck {
						t.Errorf("outsider probe runs in %s as UID %d expecting %v beside %q, want the unmeshed %s, a drop, beside the control",
							pb.Job.Namespace, pb.Job.UID, pb.Expect, pb.Control, probeNamespace)
					}
				case "policy-denies-identity":
					if pb.Job.ServiceAccount != probeServiceAccount || pb.Control != controlCheck {
						t.Errorf("identity probe runs as %s beside %q", pb.Job.ServiceAccount, pb.Control)
					}
					assertNeighbour(t, pb, control, nil)
				case "policy-denies-path":
					if want := "http://tier-1-app-a.ns-1:8080/admin/denied"; url != want || pb.Job.ServiceAccount != loadServiceAccount {
						t.Errorf("path probe asks %s as %s, want %s as %s", url, pb.Job.ServiceAccount, want, loadServiceAccount)
					}
				case "ingress-routes":
					want := "http://meshbench-ingress.meshbench-ingress:80/ns-1/"
					if pr.Mesh == "istio" {
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

// assertNeighbour checks that a probe runs as its control's neighbour:
// the same namespace, the same node (kept there by name) and the same
// pod labels but for extra, the same URL, and no same-pod control.
func assertNeighbour(t *testing.T, pb, control probe, extra map[string]string) {
	t.Helper()
	if pb.Job.Namespace != control.Job.Namespace || pb.Job.Node == "" || pb.Job.Node != control.Job.Node || pb.Job.Control != nil || pb.Job.UID != 0 ||
		pb.Job.Load.URL != control.Job.Load.URL {
		t.Errorf("%s runs in %s on %q (UID %d, control %v), want the neighbour of %s in %s on %q",
			pb.Check, pb.Job.Namespace, pb.Job.Node, pb.Job.UID, pb.Job.Control, control.Check, control.Job.Namespace, control.Job.Node)
	}
	pod := jobManifest(pb.Job, "img", corev1.PullIfNotPresent).Spec.Template
	ctl := jobManifest(control.Job, "img", corev1.PullIfNotPresent).Spec.Template
	want := maps.Clone(ctl.Labels)
	maps.Copy(want, extra)
	if !maps.Equal(pod.Labels, want) {
		t.Errorf("%s's pod labels %v, want its control's %v with %v", pb.Check, pod.Labels, ctl.Labels, extra)
	}
	if a := pod.Spec.Affinity; a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		t.Fatalf("%s's pod has no required node affinity: %+v", pb.Check, a)
	}
	terms := pod.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
	if len(terms) != 1 || len(terms[0].MatchFields) != 1 || terms[0].MatchFields[0].Key != "metadata.name" ||
		!slices.Equal(terms[0].MatchFields[0].Values, []string{control.Job.Node}) {
		t.Errorf("%s's pod is kept to %+v, want node %s by name", pb.Check, terms, control.Job.Node)
	}
}
