package kube

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/meshbench/meshbench/internal/infra"
	"github.com/meshbench/meshbench/internal/load"
	"github.com/meshbench/meshbench/internal/mesh"
)

// probeNamespace is outside every mesh: no injection, no enrollment.
// Only Cilium's outsider probe runs there, since Cilium leaves no pod of
// a namespace out of its data path.
const probeNamespace = "meshbench-probe"

// dataplaneNone is the value of labelDataplane that leaves a pod out of
// ambient even in an enrolled namespace: istio-cni enrolls the pods of a
// namespace labelled ambient whose own label is not "none".
const dataplaneNone = "none"

// probeKind is what a probe expects of its answers.
type probeKind int

const (
	expectSuccess   probeKind = iota // some 2xx: the service answers
	expectRefused                    // every request refused at the transport (see refusals)
	expectForbidden                  // every answer a 403: denied at L7
	expectDenied                     // every request refused at the transport or answered 403
	expectDropped                    // every request timed out: dropped by a policy
)

// probe is one verification request pattern, run as a short Job.
type probe struct {
	Check  string
	What   string
	Expect probeKind
	Job    jobSpec
	// Control names the check that must pass for this one to count: a
	// refusal proves nothing when the service would not have answered.
	Control string
}

// Sidecar Envoy, ztunnel and linkerd-proxy intercept every connection, so
// they refuse one they have accepted: they reset it, close it before an
// answer, or fail its TLS handshake. A connection refused at connect is a
// network that rejects it (a NetworkPolicy answering with an ICMP
// unreachable or a RST to the SYN) or a port with no listener; a timeout
// or a DNS failure is a network that drops it. None of those is a mesh.
//
// A probe whose control is a second container of its own pod shares its
// network with it, to the same destination port: there a network that
// rejects would refuse the control too, so a connection refused where the
// control was answered is the mesh's as well.
var (
	acceptedRefusals = []string{load.KindReset, load.KindClosed, load.KindTLS}
	samePodRefusals  = []string{load.KindRefused, load.KindReset, load.KindClosed, load.KindTLS}
)

// refusals are the error kinds that count as the mesh's refusal for pb.
func refusals(pb probe) []string {
	if pb.Job.Control != nil {
		return samePodRefusals
	}
	return acceptedRefusals
}

// checkPolicyDropsOutsiders is Cilium's check in place of
// plaintext-refused: Cilium drops what its policy denies.
const checkPolicyDropsOutsiders = "policy-drops-outsiders"

// controlCheck is the probe every refusal is judged beside.
const controlCheck = "meshed-call-succeeds"

// probeRequests is how many requests a probe sends: enough that one lucky
// connection cannot pass a check by itself.
const probeRequests = 5

// probes returns the probes a plan needs: with mTLS, a meshed call that
// must succeed (the control, so that a broken service cannot pass the
// negative probes), a plaintext call from outside the mesh, and the
// policy probes; with an ingress, a call through the gateway from the
// outside generators' namespace. Every probe runs on one load node, so
// that each is judged beside a control on its node.
func (p *kubePlatform) probes(pl meshPlan) []probe {
	pr := pl.Profile
	ns := p.namespaces[0]
	suffix := strconv.FormatInt(time.Now().Unix()%1e6, 36)
	var node string
	if names := p.nodes[infra.NodeLoad]; len(names) > 0 {
		node = names[0]
	}
	job := func(name, jobNS, sa, url string) jobSpec {
		o := load.Options{URL: url, Method: http.MethodGet, Connections: 1, Requests: probeRequests, Timeout: 5 * time.Second}
		return jobSpec{Namespace: jobNS, Name: "meshbench-probe-" + name + "-" + suffix, Component: componentProbe, ServiceAccount: sa,
			Load: o, Place: p.place(infra.NodeLoad), Node: node, Deadline: jobStartAllowance + time.Minute}
	}
	var ps []probe
	if pr.MTLSProbe {
		url := p.entryURL(ns)
		var plain probe
		switch {
		case pr.ProxyUID != 0:
			// From a meshed pod, past its own proxy (as the proxy's
			// user), beside a meshed GET from a second container of the
			// same pod: same node, network, NetworkPolicy and DNS, so a
			// refusal where the mesh's call answers is the mesh's.
			plain = probe{Check: mesh.CheckPlaintextRefused, Expect: expectRefused, Job: job("plaintext", ns, loadServiceAccount, url),
				What: fmt.Sprintf("a plaintext GET from a meshed pod past its proxy (as UID %d), beside a meshed GET from the same pod", pr.ProxyUID)}
			plain.Job.UID = pr.ProxyUID
			control := plain.Job.Load
			plain.Job.Control = &control
			if pr.Mesh == mesh.Linkerd {
				// linkerd-proxy answers an unauthenticated HTTP request
				// with 403 and refuses other traffic; the same pod's
				// control shows the 403 is not the service's.
				plain.Expect = expectDenied
			}
		case pr.NodeProxies():
			// ztunnel redirects a whole pod, with no user to get past
			// it. The plaintext GET comes from the control's neighbour:
			// a pod of the same namespace, identity and node, left out
			// of ambient by one label, so under the same NetworkPolicy.
			plain = probe{Check: mesh.CheckPlaintextRefused, Expect: expectRefused, Job: job("plaintext", ns, loadServiceAccount, url),
				What: fmt.Sprintf("a plaintext GET from a pod of %s left out of ambient (%s=%s)", ns, labelDataplane, dataplaneNone)}
			plain.Job.Labels = map[string]string{labelDataplane: dataplaneNone}
		default:
			// Cilium meshes every pod of a namespace, and its policy
			// admits the namespace's own, authenticated: an outsider's
			// call is dropped, a timeout, which no refusal counts. A
			// drop shows the policy enforced, not mutual authentication
			// (any NetworkPolicy drops alike), so it is its own check,
			// and no evidence of mTLS.
			plain = probe{Check: checkPolicyDropsOutsiders, Expect: expectDropped, Job: job("outsider", probeNamespace, "default", url),
				What: "a GET from namespace " + probeNamespace + ", outside the namespace the policy admits (a drop shows the policy enforced, not mutual authentication)"}
		}
		plain.Control = controlCheck
		ps = append(ps,
			probe{Check: controlCheck, What: "a meshed GET from the load generators' identity", Expect: expectSuccess,
				Job: job("meshed", ns, loadServiceAccount, url)},
			plain)
		if pr.L4Policy || pr.L7Policy {
			pb := probe{Check: "policy-denies-identity", What: "a meshed GET from identity " + probeServiceAccount,
				Expect: expectRefused, Job: job("identity", ns, probeServiceAccount, url), Control: controlCheck}
			if pr.L7Policy {
				// Refused at L7 the call is a 403, not a reset.
				pb.Expect = expectForbidden
			}
			ps = append(ps, pb)
		}
		if pr.L7Policy {
			ps = append(ps, probe{Check: "policy-denies-path", What: "a meshed GET of " + deniedPathPrefix + "denied from the load generators' identity",
				Expect: expectForbidden, Job: job("path", ns, loadServiceAccount, p.entryBase(ns)+deniedPathPrefix+"denied")})
		}
	}
	if pl.Ingress {
		ps = append(ps, probe{Check: "ingress-routes", What: "a GET through the ingress gateway from the unmeshed namespace " + outsideNamespace,
			Expect: expectSuccess, Job: job("ingress", outsideNamespace, "default", p.ingressURL(pr, ns))})
	}
	return ps
}

// probeChecks runs the profile's probes side by side and judges each.
// The probe namespace, when a probe runs there, is made for them and
// removed after.
func (p *kubePlatform) probeChecks(ctx context.Context, pl meshPlan) ([]mesh.Check, error) {
	ps := p.probes(pl)
	if len(ps) == 0 {
		return nil, nil
	}
	if slices.ContainsFunc(ps, func(pb probe) bool { return pb.Job.Namespace == probeNamespace }) {
		ns := &corev1.Namespace{ObjectMeta: objMeta("", probeNamespace, map[string]string{labelComponent: componentProbe, labelPSS: pssRestrict})}
		objs, err := toUnstructured([]runtime.Object{ns})
		if err != nil {
			return nil, err
		}
		if err := p.apply(ctx, objs); err != nil {
			return nil, err
		}
		defer func() {
			dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), rollbackTimeout)
			defer cancel()
			if err := p.deleteNamespaces(dctx, p.selector(componentProbe)); err != nil {
				p.log.Warn("deleting the probe namespace", "err", err)
			}
		}()
	}
	checks := make([]mesh.Check, len(ps))
	var wg sync.WaitGroup
	for i := range ps {
		wg.Go(func() { checks[i] = p.runProbe(ctx, ps[i]) })
	}
	wg.Wait()
	return withControls(ps, checks), nil
}

// withControls says beside which control each check was judged, and
// fails each whose control check did not pass.
func withControls(ps []probe, checks []mesh.Check) []mesh.Check {
	byName := map[string]int{}
	for i, pb := range ps {
		byName[pb.Check] = i
	}
	for i, pb := range ps {
		if pb.Control == "" {
			continue
		}
		j, ok := byName[pb.Control]
		if !ok {
			checks[i].Pass = false
			checks[i].Detail += "; its control " + pb.Control + " did not run, so the refusal proves nothing"
			continue
		}
		checks[i].Detail += "; judged beside " + besideControl(pb, ps[j])
		if checks[i].Pass && !checks[j].Pass {
			checks[i].Pass = false
			checks[i].Detail += ", which failed, so the refusal proves nothing"
		}
	}
	return checks
}

// besideControl says where a probe ran relative to its control: in the
// same pod (the control a second container), as its neighbour (same
// namespace and node, so the same NetworkPolicy and node network), or
// elsewhere.
func besideControl(pb, ctl probe) string {
	switch {
	case pb.Job.Control != nil:
		return fmt.Sprintf("its own pod's meshed GET (same pod) and %s", ctl.Check)
	case pb.Job.Namespace == ctl.Job.Namespace && pb.Job.Node != "" && pb.Job.Node == ctl.Job.Node:
		return fmt.Sprintf("%s from a neighbour (same namespace %s and node %s)", ctl.Check, ctl.Job.Namespace, ctl.Job.Node)
	default:
		return fmt.Sprintf("%s from namespace %s, not a neighbour", ctl.Check, ctl.Job.Namespace)
	}
}

// runProbe runs one probe and judges its result. A probe that cannot run
// or report fails its check with the reason: nothing unverified passes.
func (p *kubePlatform) runProbe(ctx context.Context, pb probe) mesh.Check {
	res, err := p.runJobs(ctx, []jobSpec{pb.Job})
	if err != nil {
		return mesh.Check{Name: pb.Check, Detail: pb.What + ": could not run: " + err.Error()}
	}
	return judgeProbe(pb, res[0].Result, res[0].Control)
}

// judgeProbe decides a probe's check from the generator's result and,
// when the probe's pod ran a control beside it, the control's: a refusal
// counts only where the same pod's meshed call was answered. Which
// errors are a refusal depends on where the control ran (refusals).
func judgeProbe(pb probe, r, control *load.Result) mesh.Check {
	var ok2xx, forbidden, refused int64
	for code, n := range r.StatusCodes {
		if code >= 200 && code < 300 {
			ok2xx += n
		}
		if code == http.StatusForbidden {
			forbidden += n
		}
	}
	for _, k := range refusals(pb) {
		refused += r.ErrorKinds[k]
	}
	c := mesh.Check{Name: pb.Check}
	switch pb.Expect {
	case expectSuccess:
		c.Pass = ok2xx > 0
	case expectRefused:
		c.Pass = r.Requests > 0 && refused == r.Requests
	case expectForbidden:
		c.Pass = r.Requests > 0 && forbidden == r.Requests
	case expectDenied:
		c.Pass = r.Requests > 0 && refused+forbidden == r.Requests
	case expectDropped:
		c.Pass = r.Requests > 0 && r.ErrorKinds[load.KindTimeout] == r.Requests
	}
	c.Detail = fmt.Sprintf("%s: %d requests, %d 2xx, %d 403, %d errors%s", pb.What, r.Requests, ok2xx, forbidden, r.Errors, errorKinds(r))
	if !c.Pass && ok2xx == 0 && (pb.Expect == expectRefused || pb.Expect == expectDenied) {
		counts := "a reset, early close or TLS failure after the connection was accepted"
		if pb.Job.Control != nil {
			counts = "a refusal, reset, early close or TLS failure"
		}
		if pb.Expect == expectDenied {
			counts += " or a 403"
		}
		c.Detail += "; only " + counts + " counts, not a timeout, DNS failure or other answer"
		if pb.Job.Control == nil {
			c.Detail += ", nor a connection refused at connect, which is a network that rejects it (or no listener)"
		}
	}
	if pb.Job.Control != nil {
		if control == nil {
			c.Pass = false
			c.Detail += "; the same pod's control reported nothing"
			return c
		}
		cc := judgeProbe(probe{Check: pb.Check, What: "the same pod's meshed GET", Expect: expectSuccess}, control, nil)
		c.Detail += "; " + cc.Detail
		if !cc.Pass {
			c.Pass = false
			c.Detail += ", so the refusal may be the network's, not the mesh's"
		}
	}
	return c
}

func errorKinds(r *load.Result) string {
	if len(r.ErrorKinds) == 0 {
		return ""
	}
	var kinds []string
	for k, n := range r.ErrorKinds {
		kinds = append(kinds, fmt.Sprintf("%s=%d", k, n))
	}
	sort.Strings(kinds)
	return " (" + strings.Join(kinds, ", ") + ")"
}
