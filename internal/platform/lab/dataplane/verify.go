package dataplane

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/meshbench/meshbench/internal/mesh"
)

// Verification check names, stored with every run.
const (
	CheckConfig    = "mesh-config"              // provenance: what was installed
	CheckReady     = "proxies-ready"            // every proxy reports LIVE
	CheckMeshed    = "pods-meshed"              // every app and load pod is captured by a ready proxy
	CheckPlaintext = mesh.CheckPlaintextRefused // plaintext to a meshed pod from outside the mesh gets no answer
	CheckIdentity  = mesh.CheckPeerIdentity     // pod-to-pod mTLS carries the caller's SPIFFE ID
	CheckAllowed   = "policy-allows"            // each Service's callers get through
	CheckDenied    = "policy-denies"            // a principal (or path) the policy excludes is refused
	CheckIngress   = "ingress-routes"           // the gateway reaches every namespace's entry
	CheckHTTP2     = "http2-calls"              // calls the graph makes over gRPC or h2c answer in that protocol
)

// Verify runs the profile's checks against the live data plane.
func (in *Installation) Verify(ctx context.Context) []mesh.Check {
	f := in.settings.profile()
	checks := append([]func(context.Context) mesh.Check{in.checkConfig, in.checkReady}, in.dp.Checks(in)...)
	if in.dp.Upstream() != plainUpstream {
		checks = append(checks, in.checkPlaintext, in.checkIdentity)
	}
	if f.L4Policy || f.L7Policy {
		checks = append(checks, in.checkAllowed, in.checkDenied)
	}
	if in.ingress != nil {
		checks = append(checks, in.checkIngress)
	}
	if len(in.http2Edges()) > 0 {
		checks = append(checks, in.checkHTTP2)
	}
	return runChecks(ctx, checks)
}

// Reverify runs again the checks that say the installed data plane still
// holds: every proxy ready and, where the profile meshes pods, plaintext
// refused and the callers' identities carried. A few probes per pod, it
// is cheap enough to follow every measurement; policies, ingress and
// protocols are configuration, which nothing changes after Verify.
func (in *Installation) Reverify(ctx context.Context) []mesh.Check {
	f := in.settings.profile()
	checks := []func(context.Context) mesh.Check{in.checkReady}
	if f.Sidecars() || f.NodeProxies() {
		checks = append(checks, in.checkPlaintext, in.checkIdentity)
	}
	return runChecks(ctx, checks)
}

// runChecks runs the checks side by side, then each that failed once more
// alone.
func runChecks(ctx context.Context, checks []func(context.Context) mesh.Check) []mesh.Check {
	out := make([]mesh.Check, len(checks))
	var wg sync.WaitGroup
	for i, c := range checks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i] = c(ctx)
		}()
	}
	wg.Wait()
	// Run in parallel, the checks load the host: with hundreds of fresh
	// proxies on 2 cores, a request through a deep fan-out (Online
	// Boutique's frontend) can outlast probeTimeout while the others run.
	// A check that failed runs once more, alone; a misconfiguration fails
	// it again.
	for i, c := range checks {
		if !out[i].Pass && ctx.Err() == nil {
			out[i] = c(ctx)
		}
	}
	return out
}

// result builds a check from a list of failures out of total cases.
func result(name string, total int, failures []string, what string) mesh.Check {
	sort.Strings(failures)
	if len(failures) == 0 {
		return mesh.Check{Name: name, Pass: true, Detail: fmt.Sprintf("%d of %d %s", total, total, what)}
	}
	shown := failures
	if len(shown) > 5 {
		shown = append(shown[:5:5], fmt.Sprintf("and %d more", len(failures)-5))
	}
	return mesh.Check{Name: name, Detail: fmt.Sprintf("%d of %d fail: %s", len(failures), total, strings.Join(shown, "; "))}
}

func (in *Installation) checkConfig(context.Context) mesh.Check {
	recs := in.Proxies()
	h := sha256.New()
	for _, r := range recs {
		fmt.Fprintf(h, "%s %s\n", r.Name, r.ConfigSHA256)
	}
	hash := hex.EncodeToString(h.Sum(nil))[:16]
	return mesh.Check{Name: CheckConfig, Pass: true, ConfigHash: hash, Facts: map[string]string{mesh.FactEnvoyVersion: in.version, mesh.FactEnvoyBuild: in.build},
		Detail: fmt.Sprintf("profile %s, envoy %s, %d proxies, bootstrap sha256 %s", in.settings.Profile, in.version, len(recs), hash)}
}

// allProxies lists every running proxy.
func (in *Installation) allProxies() []*proxy {
	in.mu.Lock()
	defer in.mu.Unlock()
	var out []*proxy
	for _, p := range in.sidecars {
		out = append(out, p)
	}
	for _, p := range in.nodes {
		out = append(out, p)
	}
	for _, p := range in.wpProxies {
		out = append(out, p)
	}
	if in.ingress != nil {
		out = append(out, in.ingress.proxy)
	}
	return out
}

func (in *Installation) checkReady(ctx context.Context) mesh.Check {
	ps := in.allProxies()
	var mu sync.Mutex
	var bad []string
	parallel(ps, func(p *proxy) {
		body, code, err := adminGet(ctx, p.path(adminSocket), "/ready")
		if err != nil || code != 200 || strings.TrimSpace(body) != "LIVE" {
			mu.Lock()
			bad = append(bad, fmt.Sprintf("%s: %d %s %v", p.Name, code, strings.TrimSpace(body), err))
			mu.Unlock()
		}
	})
	return result(CheckReady, len(ps), bad, "proxies ready")
}

// checkCaptured reads the capture rules back from the namespace that
// captures each meshed pod's traffic and checks the proxy that takes them
// runs; by gives a pod's proxy (nil when it has none), that namespace and
// the rules it must hold.
func (in *Installation) checkCaptured(ctx context.Context, by func(p *Pod) (px *proxy, netns string, rules []string)) mesh.Check {
	pods := in.inv.meshedPods("")
	var mu sync.Mutex
	var bad []string
	fail := func(s string) { mu.Lock(); bad = append(bad, s); mu.Unlock() }
	parallel(pods, func(p *Pod) {
		in.mu.Lock()
		px, netns, rules := by(p)
		in.mu.Unlock()
		if px == nil {
			fail(p.Key() + ": no proxy")
			return
		}
		out, err := in.c.Run(ctx, netns, nil, "iptables-save")
		if err != nil {
			fail(fmt.Sprintf("%s: read rules: %v", p.Key(), err))
			return
		}
		for _, r := range rules {
			if !strings.Contains(string(out), r) {
				fail(fmt.Sprintf("%s: capture rule missing: %s", p.Key(), r))
				return
			}
		}
		if body, code, err := adminGet(ctx, px.path(adminSocket), "/ready"); err != nil || code != 200 || strings.TrimSpace(body) != "LIVE" {
			fail(fmt.Sprintf("%s: proxy %s not ready", p.Key(), px.Name))
		}
	})
	return result(CheckMeshed, len(pods), bad, "pods meshed")
}

// checkPlaintext sends plain HTTP to every meshed pod's ports from every
// node's namespace (outside the mesh); STRICT mTLS must leave each
// without an answer.
func (in *Installation) checkPlaintext(ctx context.Context) mesh.Check {
	type target struct {
		from string
		req  request
	}
	var ts []target
	for _, p := range in.inv.meshedPods("") {
		for _, port := range in.inv.podPorts(p) {
			for _, n := range in.inv.Nodes {
				ts = append(ts, target{n.Name, request{Netns: n.Netns, Addr: hostPort(p.IP.String(), port)}})
			}
		}
	}
	var mu sync.Mutex
	var bad []string
	parallel(ts, func(t target) {
		if status, err := in.get(ctx, t.req); err == nil {
			mu.Lock()
			bad = append(bad, fmt.Sprintf("node %s -> %s answered %d in plaintext", t.from, t.req.Addr, status))
			mu.Unlock()
		}
	})
	return result(CheckPlaintext, len(ts), bad, "plaintext connections refused")
}

// parallel runs fn on every item, a few at a time.
func parallel[T any](items []T, fn func(T)) {
	sem := make(chan struct{}, 8)
	var wg sync.WaitGroup
	for _, it := range items {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			fn(it)
		}()
	}
	wg.Wait()
}
