package lab

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/meshbench/meshbench/internal/mesh"
	"github.com/meshbench/meshbench/internal/metrics"
	"github.com/meshbench/meshbench/internal/platform/lab/cluster"
	"github.com/meshbench/meshbench/internal/platform/lab/dataplane"
	"github.com/meshbench/meshbench/internal/topology"

	"github.com/meshbench/meshbench/internal/testenv"
)

// meshLab is a 3-node lab (app, load, ingress) running the tiered graph in
// ns-1 with stand-in servers (python3 -m http.server answers 200 on /),
// since the checks make every call of the graph themselves.
type meshLab struct {
	l   *cluster.Lab
	c   *meshCluster
	dir string
}

func newMeshLab(t *testing.T) *meshLab {
	t.Helper()
	testenv.Integration(t)
	testenv.NeedRoot(t)
	_, err := dataplane.FindEnvoy()
	testenv.Need(t, err == nil, "Envoy (scripts/setup.sh installs it into .venv; MESHBENCH_ENVOY names it): %v", err)
	b := make([]byte, 2)
	_, _ = rand.Read(b)
	prefix := "mbm" + hex.EncodeToString(b)
	// A 0755 base, not t.TempDir's 0700: the sidecar user must get through.
	base, err := os.MkdirTemp("", prefix+"-")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	l, err := cluster.Up(ctx, cluster.Config{Name: prefix, Prefix: prefix, StateDir: filepath.Join(base, "state"), Nodes: []cluster.NodeConfig{
		{Name: "app", Role: "app"}, {Name: "load", Role: "load"}, {Name: "ingress", Role: "ingress"},
	}})
	if err != nil {
		os.RemoveAll(base)
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			dumpLogs(t, filepath.Join(l.StateDir(), "logs"))
		}
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		if err := l.Down(ctx); err != nil {
			t.Errorf("lab down: %v", err)
		}
		os.RemoveAll(base)
	})
	g, err := topology.Builtin("tiered")
	if err != nil {
		t.Fatal(err)
	}
	var pods []cluster.PodSpec
	for _, s := range g.Services {
		if _, err := l.ApplyService(ctx, cluster.ServiceSpec{Namespace: "ns-1", Name: s.Name, Selector: map[string]string{LabelApp: s.Name}, Port: s.Port}); err != nil {
			t.Fatal(err)
		}
		pods = append(pods, cluster.PodSpec{
			Namespace: "ns-1", Name: s.Name + "-0", Node: "app", ServiceAccount: s.ServiceAccount,
			Labels: map[string]string{LabelApp: s.Name, LabelRole: string(metrics.RoleApp)},
			Containers: []cluster.ContainerSpec{{Name: "app", Role: metrics.RoleApp,
				Command:   []string{"python3", "-m", "http.server", "--bind", "0.0.0.0", "8080"},
				Readiness: &cluster.Probe{Port: 8080, Path: "/"}}},
		})
	}
	pods = append(pods, cluster.PodSpec{Namespace: "ns-1", Name: LoadPodName, Node: "load", ServiceAccount: LoadServiceAccount,
		Labels: map[string]string{LabelRole: string(metrics.RoleLoad)}})
	if err := l.CreatePods(ctx, pods); err != nil {
		t.Fatal(err)
	}
	if err := l.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	return &meshLab{l: l, c: &meshCluster{l: l, g: g}, dir: filepath.Join(base, "mesh")}
}

// dumpLogs prints the end of every pod log, to explain a failure.
func dumpLogs(t *testing.T, dir string) {
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		b, _ := os.ReadFile(filepath.Join(dir, e.Name()))
		if len(b) > 2000 {
			b = b[len(b)-2000:]
		}
		t.Logf("log %s:\n%s", e.Name(), b)
	}
}

// install installs a profile and requires every check to pass.
func (m *meshLab) install(t *testing.T, profile string) *dataplane.Installation {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	in, checks, err := dataplane.Install(ctx, m.c, mesh.MeshSpec{Profile: profile}, dataplane.Options{Dir: m.dir})
	for _, c := range checks {
		t.Logf("%s %s: pass=%v %s", profile, c.Name, c.Pass, c.Detail)
	}
	if err != nil {
		t.Fatalf("install %s: %v", profile, err)
	}
	t.Cleanup(func() { m.remove(t, in) })
	return in
}

func (m *meshLab) remove(t *testing.T, in *dataplane.Installation) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := in.Remove(ctx); err != nil {
		t.Errorf("remove: %v", err)
	}
}

// run runs a command in a pod's or node's namespace.
func (m *meshLab) run(t *testing.T, netns string, args ...string) string {
	t.Helper()
	out, err := m.c.Run(context.Background(), netns, nil, args...)
	if err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	return string(out)
}

func (m *meshLab) pod(t *testing.T, name string) cluster.Pod {
	t.Helper()
	p, ok := m.l.Pod("ns-1", name)
	if !ok {
		t.Fatalf("no pod %s", name)
	}
	return p
}

// checkNamed finds a check by name.
func checkNamed(t *testing.T, checks []mesh.Check, name string) mesh.Check {
	t.Helper()
	for _, c := range checks {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("no check %s in %v", name, checks)
	return mesh.Check{}
}

// wantChecks asserts which checks pass and which fail.
func wantChecks(t *testing.T, checks []mesh.Check, pass, fail []string) {
	t.Helper()
	for _, n := range pass {
		if c := checkNamed(t, checks, n); !c.Pass {
			t.Errorf("check %s failed: %s", n, c.Detail)
		}
	}
	for _, n := range fail {
		if c := checkNamed(t, checks, n); c.Pass {
			t.Errorf("check %s passed on a broken mesh: %s", n, c.Detail)
		} else {
			t.Logf("check %s fails as it should: %s", n, c.Detail)
		}
	}
}

// plaintextAnswers reports whether a pod answers plain HTTP from a node.
func (m *meshLab) plaintextAnswers(t *testing.T, node, pod string) bool {
	t.Helper()
	n, _ := m.l.Node(node)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	conn, err := m.c.Dial(ctx, n.Netns, m.pod(t, pod).IP.String()+":8080")
	if err != nil {
		return false
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(3 * time.Second))
	if _, err := conn.Write([]byte("GET / HTTP/1.0\r\n\r\n")); err != nil {
		return false
	}
	b := make([]byte, 12)
	n2, _ := conn.Read(b)
	return strings.HasPrefix(string(b[:n2]), "HTTP/")
}

func TestIntegrationMeshSidecar(t *testing.T) {
	m := newMeshLab(t)
	all := []string{dataplane.CheckConfig, dataplane.CheckReady, dataplane.CheckMeshed, dataplane.CheckPlaintext, dataplane.CheckIdentity, dataplane.CheckIngress}
	in := m.install(t, "sidecar")
	wantChecks(t, in.Verify(context.Background()), all, nil)
	wantProxyPrivileges(t, m.l, metrics.RoleSidecar, metrics.RoleIngress)

	// A pod left unmeshed: its capture removed, as if istio-init never ran.
	t3 := m.pod(t, "tier-3-app-a-0")
	m.run(t, t3.Netns, "iptables", "-t", "nat", "-D", "PREROUTING", "-p", "tcp", "-j", "ISTIO_INBOUND")
	m.run(t, t3.Netns, "iptables", "-t", "nat", "-D", "OUTPUT", "-p", "tcp", "-j", "ISTIO_OUTPUT")
	wantChecks(t, in.Verify(context.Background()), []string{dataplane.CheckReady}, []string{dataplane.CheckMeshed, dataplane.CheckPlaintext})
	m.run(t, t3.Netns, "iptables", "-t", "nat", "-A", "PREROUTING", "-p", "tcp", "-j", "ISTIO_INBOUND")
	m.run(t, t3.Netns, "iptables", "-t", "nat", "-A", "OUTPUT", "-p", "tcp", "-j", "ISTIO_OUTPUT")
	wantChecks(t, in.Verify(context.Background()), all, nil)

	// Plaintext allowed on one port (PERMISSIVE-like hole).
	t2 := m.pod(t, "tier-2-app-a-0")
	m.run(t, t2.Netns, "iptables", "-t", "nat", "-I", "ISTIO_INBOUND", "1", "-p", "tcp", "--dport", "8080", "-j", "RETURN")
	wantChecks(t, in.Verify(context.Background()), []string{dataplane.CheckMeshed}, []string{dataplane.CheckPlaintext})

	m.remove(t, in)
	if !m.plaintextAnswers(t, "load", "tier-2-app-a-0") {
		t.Error("after removal, the pod does not answer plaintext")
	}
	if rules := m.run(t, t2.Netns, "iptables-save"); strings.Contains(rules, "ISTIO") {
		t.Errorf("capture rules left after removal:\n%s", rules)
	}

	in = m.install(t, "sidecar-l7-policy")
	wantChecks(t, in.Verify(context.Background()), append(all, dataplane.CheckAllowed, dataplane.CheckDenied), nil)
}

func TestIntegrationMeshAmbient(t *testing.T) {
	m := newMeshLab(t)
	all := []string{dataplane.CheckConfig, dataplane.CheckReady, dataplane.CheckMeshed, dataplane.CheckPlaintext, dataplane.CheckIdentity, dataplane.CheckIngress}
	in := m.install(t, "ambient")
	wantChecks(t, in.Verify(context.Background()), all, nil)

	// A pod left out of its node's capture.
	node, _ := m.l.Node("app")
	ip := m.pod(t, "tier-3-app-a-0").IP.String() + "/32"
	for _, rule := range [][]string{
		{"-s", ip, "-p", "tcp", "-j", "TPROXY", "--on-port", "15001", "--on-ip", "127.0.0.1", "--tproxy-mark", "0x111/0xfff"},
		{"-d", ip, "-p", "tcp", "-m", "tcp", "--dport", "15008", "-j", "TPROXY", "--on-port", "15008", "--on-ip", "127.0.0.1", "--tproxy-mark", "0x111/0xfff"},
		{"-d", ip, "-p", "tcp", "-j", "TPROXY", "--on-port", "15006", "--on-ip", "127.0.0.1", "--tproxy-mark", "0x111/0xfff"},
	} {
		m.run(t, node.Netns, append([]string{"iptables", "-t", "mangle", "-D", "ztunnel-PREROUTING"}, rule...)...)
	}
	wantChecks(t, in.Verify(context.Background()), []string{dataplane.CheckReady}, []string{dataplane.CheckMeshed, dataplane.CheckPlaintext})
	m.remove(t, in)
	if !m.plaintextAnswers(t, "load", "tier-2-app-a-0") {
		t.Error("after removal, the pod does not answer plaintext")
	}
	if rules := m.run(t, node.Netns, "iptables-save"); strings.Contains(rules, "ztunnel") {
		t.Errorf("capture rules left after removal:\n%s", rules)
	}
	if rules := m.run(t, node.Netns, "ip", "rule"); strings.Contains(rules, "0x111") {
		t.Errorf("policy route left after removal:\n%s", rules)
	}
}

// RBAC filters, as retuneRBAC picks them from a bootstrap.
var (
	l4PolicyRBAC = func(m map[string]any) bool { return m["stat_prefix"] == "ztunnel_rbac" }
	httpRBAC     = func(m map[string]any) bool {
		return m["@type"] == "type.googleapis.com/envoy.extensions.filters.http.rbac.v3.RBAC"
	}
)

// retuneRBAC rewrites the action of the RBAC filters pick selects in a
// proxy's bootstrap, as a broken policy rollout would.
func retuneRBAC(t *testing.T, path string, pick func(map[string]any) bool, action string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var cfg any
	if err := json.Unmarshal(b, &cfg); err != nil {
		t.Fatal(err)
	}
	n := 0
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			if pick(x) {
				if r, ok := x["rules"].(map[string]any); ok {
					r["action"] = action
					n++
				}
			}
			for _, c := range x {
				walk(c)
			}
		case []any:
			for _, c := range x {
				walk(c)
			}
		}
	}
	walk(cfg)
	if n == 0 {
		t.Fatalf("no RBAC filter to retune in %s", path)
	}
	if b, err = json.Marshal(cfg); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// restartProxy restarts a mesh container and waits for its admin socket
// to say LIVE again.
func (m *meshLab) restartProxy(t *testing.T, namespace, pod, container, dir string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := m.l.RestartContainer(ctx, namespace, pod, container); err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond) // let the old process go
	c := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", filepath.Join(dir, "admin.sock"))
	}}}
	for ctx.Err() == nil {
		if resp, err := c.Get("http://envoy/ready"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("%s/%s did not come back", pod, container)
}

func TestIntegrationMeshAmbientL4Policy(t *testing.T) {
	m := newMeshLab(t)
	all := []string{dataplane.CheckConfig, dataplane.CheckReady, dataplane.CheckMeshed, dataplane.CheckPlaintext, dataplane.CheckIdentity,
		dataplane.CheckAllowed, dataplane.CheckDenied, dataplane.CheckIngress}
	in := m.install(t, "ambient-l4-policy")
	wantChecks(t, in.Verify(context.Background()), all, nil)

	// A policy that admits whom it should refuse: ALLOW turned into DENY on
	// the app node's ztunnel.
	dir := filepath.Join(m.dir, "ztunnel", "app")
	retuneRBAC(t, filepath.Join(dir, "envoy.json"), l4PolicyRBAC, "DENY")
	m.restartProxy(t, "istio-system", "ztunnel-app", "ztunnel", dir)
	wantChecks(t, in.Verify(context.Background()), []string{dataplane.CheckReady, dataplane.CheckMeshed, dataplane.CheckPlaintext},
		[]string{dataplane.CheckDenied, dataplane.CheckAllowed})
}

func TestIntegrationMeshWaypoint(t *testing.T) {
	m := newMeshLab(t)
	all := []string{dataplane.CheckConfig, dataplane.CheckReady, dataplane.CheckMeshed, dataplane.CheckPlaintext, dataplane.CheckIdentity, dataplane.CheckIngress}
	in := m.install(t, "ambient-waypoint")
	wantChecks(t, in.Verify(context.Background()), all, nil)
	wantProxyPrivileges(t, m.l, metrics.RoleNodeProxy, metrics.RoleWaypoint, metrics.RoleIngress)
	m.remove(t, in)

	in = m.install(t, "waypoint-l7-policy")
	wantChecks(t, in.Verify(context.Background()), append(all, dataplane.CheckAllowed, dataplane.CheckDenied), nil)
	// The L7 rule inverted at the waypoint: refused calls get through.
	dir := filepath.Join(m.dir, "waypoint", "ns-1", "waypoint-0")
	retuneRBAC(t, filepath.Join(dir, "envoy.json"), httpRBAC, "DENY")
	m.restartProxy(t, "ns-1", "waypoint-0", "istio-proxy", dir)
	wantChecks(t, in.Verify(context.Background()), []string{dataplane.CheckReady}, []string{dataplane.CheckDenied, dataplane.CheckAllowed})
}

func TestIntegrationMeshBaseline(t *testing.T) {
	m := newMeshLab(t)
	in := m.install(t, "baseline")
	checks := in.Verify(context.Background())
	wantChecks(t, checks, []string{dataplane.CheckConfig, dataplane.CheckReady, dataplane.CheckIngress}, nil)
	for _, c := range checks {
		if c.Name == dataplane.CheckMeshed || c.Name == dataplane.CheckPlaintext {
			t.Errorf("baseline runs mesh check %s", c.Name)
		}
	}
	if !m.plaintextAnswers(t, "load", "tier-1-app-a-0") {
		t.Error("baseline pods must answer plaintext")
	}
	u, err := in.IngressURL("ns-1", "/productpage")
	if err != nil || u != "http://10.255.0.3:8080/ns-1/productpage" {
		t.Errorf("ingress URL %q %v", u, err)
	}
}

// The node proxies' HBONE log stays empty under load, off its hot path,
// and is written only while the identity check runs, which still finds
// the callers' identities there.
func TestIntegrationHBONELogOffUnderLoad(t *testing.T) {
	m := newMeshLab(t)
	in := m.install(t, "ambient")
	logFile := filepath.Join(m.dir, "ztunnel", "app", "connect.log")
	size := func() int64 {
		fi, err := os.Stat(logFile)
		if errors.Is(err, os.ErrNotExist) {
			return 0
		}
		if err != nil {
			t.Fatal(err)
		}
		return fi.Size()
	}
	before := size()
	svc, ok := m.l.Service("ns-1", m.c.g.Entry)
	if !ok {
		t.Fatal("no entry Service")
	}
	load := m.pod(t, LoadPodName)
	out := m.run(t, load.Netns, "sh", "-c", "for i in $(seq 50); do curl -s -o /dev/null -w '%{http_code}\\n' http://"+svc.Addr().String()+"/; done")
	if n := strings.Count(out, "200"); n != 50 {
		t.Fatalf("%d of 50 requests through the mesh answered 200:\n%s", n, out)
	}
	if after := size(); after != before {
		t.Errorf("the HBONE log grew from %d to %d bytes under 50 requests; want it off", before, after)
	}
	for _, c := range in.Reverify(context.Background()) {
		if !c.Pass {
			t.Errorf("%s: %s", c.Name, c.Detail)
		}
	}
	checked := size()
	if checked <= before {
		t.Errorf("the identity check wrote no HBONE log line (%d bytes)", checked)
	}
	m.run(t, load.Netns, "curl", "-s", "-o", "/dev/null", "http://"+svc.Addr().String()+"/")
	if after := size(); after != checked {
		t.Errorf("the HBONE log is on after the check: %d bytes, then %d", checked, after)
	}
}

// TestIntegrationHBONEPooled checks that HBONE tunnels are pooled as
// ztunnel pools them: new connections from one pod to one destination each
// become a CONNECT stream on an mTLS connection already open (one per
// proxy worker at most, as Envoy pools per worker), not a TLS handshake
// each. With a waypoint, the node proxy pools its tunnels to the waypoint
// and the waypoint its own to the pods.
func TestIntegrationHBONEPooled(t *testing.T) {
	m := newMeshLab(t)
	svc, ok := m.l.Service("ns-1", m.c.g.Entry)
	if !ok {
		t.Fatal("no entry Service")
	}
	load := m.pod(t, LoadPodName)
	origin := "cluster.connect_originate|ns-1/" + LoadPodName
	const conns, workers = 40, mesh.DefaultNodeProxyWorkers
	for _, profile := range []string{"ambient", "ambient-waypoint"} {
		in := m.install(t, profile)
		src := filepath.Join(m.dir, "ztunnel", "load")
		dst := filepath.Join(m.dir, "ztunnel", "app")
		if profile == "ambient-waypoint" {
			dst = filepath.Join(m.dir, "waypoint", "ns-1", "waypoint-0")
		}
		srcBefore, dstBefore := proxyStats(t, src), proxyStats(t, dst)
		out := m.run(t, load.Netns, "sh", "-c", fmt.Sprintf("for i in $(seq %d); do curl -s -o /dev/null -w '%%{http_code}\\n' http://%s/; done", conns, svc.Addr()))
		if n := strings.Count(out, "200"); n != conns {
			t.Fatalf("%s: %d of %d requests answered 200:\n%s", profile, n, conns, out)
		}
		srcAfter, dstAfter := proxyStats(t, src), proxyStats(t, dst)
		delta := func(before, after map[string]int64, name string) int64 {
			v, ok := after[name]
			if !ok {
				t.Fatalf("%s: no stat %s", profile, name)
			}
			return v - before[name]
		}
		accepted := delta(srcBefore, srcAfter, "listener.0.0.0.0_15001.downstream_cx_total")
		streams := delta(srcBefore, srcAfter, origin+".upstream_rq_total")
		opened := delta(srcBefore, srcAfter, origin+".upstream_cx_total")
		handshakes := delta(dstBefore, dstAfter, "listener.0.0.0.0_15008.ssl.handshake")
		t.Logf("%s: %d connections accepted, %d CONNECT streams, %d HBONE connections opened, %d TLS handshakes at the destination",
			profile, accepted, streams, opened, handshakes)
		if accepted < conns || streams < conns {
			t.Errorf("%s: %d connections accepted and %d CONNECT streams for %d new connections; want each tunnelled", profile, accepted, streams, conns)
		}
		if opened > workers || handshakes > workers {
			t.Errorf("%s: %d new connections opened %d HBONE connections (%d handshakes at the destination); want at most %d, one per worker", profile, conns, opened, handshakes, workers)
		}
		if profile == "ambient-waypoint" {
			wp := "cluster.connect_originate"
			if streams, opened := delta(dstBefore, dstAfter, wp+".upstream_rq_total"), delta(dstBefore, dstAfter, wp+".upstream_cx_total"); opened > workers {
				t.Errorf("the waypoint opened %d HBONE connections to the pods (%d streams); want at most %d", opened, streams, workers)
			}
		}
		m.remove(t, in)
	}
}

// proxyStats reads a proxy's connection, request and TLS handshake
// counters from its admin socket in dir.
func proxyStats(t *testing.T, dir string) map[string]int64 {
	t.Helper()
	c := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", filepath.Join(dir, "admin.sock"))
	}}}
	defer c.CloseIdleConnections()
	resp, err := c.Get("http://envoy/stats?filter=" + url.QueryEscape(`(cx_total|rq_total|ssl\.handshake)$`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("stats of %s: %d %v", dir, resp.StatusCode, err)
	}
	out := map[string]int64{}
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		name, v, ok := strings.Cut(l, ": ")
		if !ok {
			continue
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			t.Fatalf("stats of %s: %q", dir, l)
		}
		out[name] = n
	}
	return out
}

// wantProxyPrivileges checks that every proxy runs as 1337 and that only
// the node proxy keeps a capability of root, CAP_NET_ADMIN for TPROXY and
// SO_MARK; each role named must have a proxy.
func wantProxyPrivileges(t *testing.T, l *cluster.Lab, roles ...metrics.Role) {
	t.Helper()
	seen := map[metrics.Role]int{}
	for _, pod := range l.Pods() {
		for _, c := range pod.Containers {
			if !slices.Contains(roles, c.Role) {
				continue
			}
			seen[c.Role]++
			var want []int
			if c.Role == metrics.RoleNodeProxy {
				want = []int{testenv.CapNetAdmin}
			}
			if x := testenv.ProcPrivileges(t, c.PID); x.UID != "1337 1337 1337 1337" || !x.Only(want...) || !x.NoNewPrivs {
				t.Errorf("%s %s: %+v, want user 1337 with capabilities %v only", pod.Key(), c.Name, x, want)
			}
		}
	}
	for _, r := range roles {
		if seen[r] == 0 {
			t.Errorf("no running %s to check", r)
		}
	}
}
