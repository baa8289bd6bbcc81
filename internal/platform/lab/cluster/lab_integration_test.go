package cluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/meshbench/meshbench/internal/resources"
	"github.com/meshbench/meshbench/internal/testenv"
)

// httpIn returns a client whose connections start in a network namespace,
// one connection per request so that each goes through load balancing.
func httpIn(netnsName string) *http.Client {
	return &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		DisableKeepAlives: true,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			return DialIn(ctx, netnsName, network, addr)
		},
	}}
}

func get(t *testing.T, c *http.Client, url string) string {
	t.Helper()
	resp, err := c.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// hostGateway is the root namespace's default gateway, read (never
// contacted) to prove the lab has no route to it.
func hostGateway(t *testing.T) net.IP {
	routes, err := netlink.RouteList(nil, unix.AF_INET)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range routes {
		if r.Dst == nil && r.Gw != nil {
			return r.Gw
		}
	}
	return nil
}

func TestIntegrationIsolation(t *testing.T) {
	l := newTestLab(t, NodeConfig{Name: "a", Role: "app"}, NodeConfig{Name: "b", Role: "load"})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := l.CreatePods(ctx, []PodSpec{servePod("ns-1", "web", "a", 8080), servePod("ns-1", "client", "b", 8081)}); err != nil {
		t.Fatal(err)
	}
	if err := l.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	outside := []net.IP{net.ParseIP("8.8.8.8"), net.ParseIP("192.168.1.1"), net.ParseIP("10.1.2.3")}
	if gw := hostGateway(t); gw != nil {
		outside = append(outside, gw)
	}
	var spaces []string
	for _, p := range l.Pods() {
		spaces = append(spaces, p.Netns)
	}
	for _, n := range l.Nodes() {
		spaces = append(spaces, n.Netns)
	}
	spaces = append(spaces, CloudNetns(l.Prefix()))
	for _, ns := range spaces {
		h, err := netns.GetFromName(ns)
		if err != nil {
			t.Fatal(err)
		}
		nl, err := netlink.NewHandleAt(h)
		h.Close()
		if err != nil {
			t.Fatal(err)
		}
		for _, ip := range outside {
			if r, err := nl.RouteGet(ip); err == nil {
				t.Errorf("%s has a route to %s: %v", ns, ip, r)
				continue
			}
			// With no route, connect fails locally: nothing is sent.
			_, err := DialIn(ctx, ns, "tcp", net.JoinHostPort(ip.String(), "53"))
			if !errors.Is(err, unix.ENETUNREACH) {
				t.Errorf("%s: dial %s: got %v, want network unreachable", ns, ip, err)
			}
		}
		nl.Close()
	}
	// And the lab's own addresses are reachable: pod to pod across nodes.
	web, _ := l.Pod("ns-1", "web")
	client, _ := l.Pod("ns-1", "client")
	if got := get(t, httpIn(client.Netns), fmt.Sprintf("http://%s:8080/", web.IP)); got != "web" {
		t.Errorf("pod to pod: got %q", got)
	}
}

func TestIntegrationServiceLoadBalancing(t *testing.T) {
	l := newTestLab(t, NodeConfig{Name: "a", Role: "app"}, NodeConfig{Name: "b", Role: "app"}, NodeConfig{Name: "load", Role: "load"})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	client := servePod("ns-1", "client", "load", 9000)
	client.Labels = nil
	pods := []PodSpec{client, servePod("ns-1", "web-0", "a", 8080), servePod("ns-1", "web-1", "b", 8080), servePod("ns-1", "web-2", "a", 8080)}
	if err := l.CreatePods(ctx, pods); err != nil {
		t.Fatal(err)
	}
	svc, err := l.ApplyService(ctx, ServiceSpec{Namespace: "ns-1", Name: "web", Selector: map[string]string{"app": "web"}, Port: 80, TargetPort: 8080})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	if s, _ := l.Service("ns-1", "web"); len(s.Endpoints) != 3 {
		t.Fatalf("endpoints: %v, want 3", s.Endpoints)
	}
	c := httpIn(client.Netns(l))
	count := func(n int) map[string]int {
		seen := map[string]int{}
		for i := 0; i < n; i++ {
			seen[get(t, c, "http://"+svc.Addr().String()+"/")]++
		}
		return seen
	}
	const n = 300
	seen := count(n)
	for _, name := range []string{"web-0", "web-1", "web-2"} {
		// Uniform would be 100 each; 50 is more than 7 sigma away.
		if seen[name] < 50 {
			t.Errorf("backend %s got %d of %d requests: %v", name, seen[name], n, seen)
		}
	}
	if len(seen) != 3 {
		t.Errorf("answers from %v, want the 3 backends", seen)
	}
	// Deleting a backend takes it out of the rules.
	if err := l.DeletePods(ctx, "ns-1/web-1"); err != nil {
		t.Fatal(err)
	}
	if err := l.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	seen = count(60)
	if seen["web-1"] != 0 || seen["web-0"] == 0 || seen["web-2"] == 0 {
		t.Errorf("after deleting web-1: %v", seen)
	}
}

// Netns is the namespace a pod spec gets in lab l.
func (s PodSpec) Netns(l *Lab) string { return PodNetns(l.Prefix(), s.Namespace, s.Name) }

func TestIntegrationCPULimitThrottles(t *testing.T) {
	testenv.Integration(t)
	testenv.SkipUnderRace(t, "timing-sensitive: CPU consumed under a CFS quota")
	l := newTestLab(t, NodeConfig{Name: "a", Role: "app"})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	spin := PodSpec{Namespace: "ns-1", Name: "spin", Node: "a", Containers: []ContainerSpec{{
		Name: "spin", Command: []string{helperBin(t)}, Env: []string{"MB_LAB_HELPER=spin"},
		Resources: resources.Requirements{CPULimitMilli: 200}}}}
	if err := l.CreatePods(ctx, []PodSpec{spin}); err != nil {
		t.Fatal(err)
	}
	s := l.StartSampler(250 * time.Millisecond)
	time.Sleep(2500 * time.Millisecond)
	s.Stop()
	series := s.Window(time.Time{}, time.Time{})
	if len(series) != 1 {
		t.Fatalf("series: %d, want 1", len(series))
	}
	// Skip the first sample, which may include start-up.
	got := series[0]
	got.Samples = got.Samples[2:]
	if m := got.MeanCPU(); m < 0.1 || m > 0.3 {
		t.Errorf("busy loop limited to 200m used %.3f cores", m)
	}
	if c := got.Component; c.CPULimitMilli != 200 || c.CPURequestMilli != 200 || c.Pod != "spin" || c.Node != "a" {
		t.Errorf("component %+v", c)
	}
	u, err := l.cg.read(containerCgroup("a", "ns-1", "spin", "spin"))
	if err != nil {
		t.Fatal(err)
	}
	if u.Throttled == 0 {
		t.Error("no throttled periods")
	}
}

func TestIntegrationMemoryLimitOOMKills(t *testing.T) {
	l := newTestLab(t, NodeConfig{Name: "a", Role: "app"})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	pod := PodSpec{Namespace: "ns-1", Name: "hog", Node: "a", Containers: []ContainerSpec{{
		Name: "hog", Command: []string{helperBin(t)}, Env: []string{"MB_LAB_HELPER=alloc"},
		Resources: resources.Requirements{MemLimitBytes: 64 << 20}, Restart: RestartNever}}}
	if err := l.CreatePods(ctx, []PodSpec{pod}); err != nil {
		t.Fatal(err)
	}
	code, err := l.WaitContainer(ctx, "ns-1", "hog", "hog")
	if err != nil {
		t.Fatal(err)
	}
	if code != -1 {
		t.Errorf("exit code %d, want -1 (killed)", code)
	}
	u, err := l.cg.read(containerCgroup("a", "ns-1", "hog", "hog"))
	if err != nil {
		t.Fatal(err)
	}
	if u.OOMKills == 0 {
		t.Error("no OOM kill counted")
	}
}

func TestIntegrationRestartsAndReadiness(t *testing.T) {
	l := newTestLab(t, NodeConfig{Name: "a", Role: "app"})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := l.CreatePods(ctx, []PodSpec{servePod("ns-1", "web", "a", 8080)}); err != nil {
		t.Fatal(err)
	}
	if err := l.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	p, _ := l.Pod("ns-1", "web")
	if err := unix.Kill(p.Containers[0].PID, unix.SIGKILL); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		p, _ = l.Pod("ns-1", "web")
		if c := p.Containers[0]; c.Restarts == 1 && c.Ready {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("not restarted and ready: %+v", p.Containers[0])
		}
		time.Sleep(50 * time.Millisecond)
	}
	m, err := l.ContainerMemory("ns-1", "web", "web")
	if err != nil {
		t.Fatal(err)
	}
	if m.RSS <= 0 || m.PSS <= 0 || m.PSS > m.RSS {
		t.Errorf("memory %+v", m)
	}
	_ = netip.Addr{}
}

// A container with a UID runs as that user, yet in its own cgroup and on
// its node's CPUs.
func TestIntegrationContainerUserAndCPUs(t *testing.T) {
	l := newTestLab(t, NodeConfig{Name: "a", Role: "app", CPUs: "0"})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var out strings.Builder
	pod := PodSpec{Namespace: "ns-1", Name: "who", Node: "a", Containers: []ContainerSpec{{
		Name: "id", Command: []string{"sh", "-c", "id -u; id -g; cat /proc/self/cgroup; grep Cpus_allowed_list /proc/self/status"}, UID: 1337, GID: 1337,
		Restart: RestartNever, Stdout: &out}}}
	if err := l.CreatePods(ctx, []PodSpec{pod}); err != nil {
		t.Fatal(err)
	}
	if code, err := l.WaitContainer(ctx, "ns-1", "who", "id"); err != nil || code != 0 {
		t.Fatalf("exit %d, %v", code, err)
	}
	lines := strings.Split(out.String(), "\n")
	if len(lines) < 3 || lines[0] != "1337" || lines[1] != "1337" {
		t.Errorf("ran as %q, want uid and gid 1337", lines)
	}
	if !strings.Contains(out.String(), containerCgroup("a", "ns-1", "who", "id")) {
		t.Errorf("not in its cgroup:\n%s", out.String())
	}
	if !strings.Contains(out.String(), "Cpus_allowed_list:\t0\n") {
		t.Errorf("not pinned to its node's CPU 0:\n%s", out.String())
	}
}

// A container starts with the lab's open-file limit, soft and hard,
// whatever meshbench's own soft limit; a pod's sysctls are its namespace's.
func TestIntegrationContainerFilesAndPodSysctls(t *testing.T) {
	l := newTestLab(t, NodeConfig{Name: "a", Role: "app"})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var out strings.Builder
	pod := PodSpec{Namespace: "ns-1", Name: "load", Node: "a",
		Sysctls: map[string]string{"net.ipv4.ip_local_port_range": "16384 65535", "net.ipv4.tcp_tw_reuse": "1"},
		Containers: []ContainerSpec{{
			Name: "limits", Command: []string{"sh", "-c", "ulimit -Sn; ulimit -Hn; cat /proc/sys/net/ipv4/ip_local_port_range /proc/sys/net/ipv4/tcp_tw_reuse"},
			UID: 1337, GID: 1337, Restart: RestartNever, Stdout: &out}}}
	if err := l.CreatePods(ctx, []PodSpec{pod}); err != nil {
		t.Fatal(err)
	}
	if code, err := l.WaitContainer(ctx, "ns-1", "load", "limits"); err != nil || code != 0 {
		t.Fatalf("exit %d, %v", code, err)
	}
	files, _, err := FileLimit()
	if err != nil {
		t.Fatal(err)
	}
	n := fmt.Sprint(files)
	if want := n + "\n" + n + "\n16384\t65535\n1\n"; out.String() != want {
		t.Errorf("container saw %q, want %q", out.String(), want)
	}
	// The host's own namespace keeps its settings.
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err != nil || strings.Fields(string(b))[0] == "16384" {
		t.Errorf("host's port range %q (%v): the pod's sysctl leaked out of its namespace", b, err)
	}
}

// A second lab with the same prefix is refused and leaves the first alone.
func TestIntegrationSecondLabRefused(t *testing.T) {
	l := newTestLab(t, NodeConfig{Name: "a", Role: "app"})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := l.CreatePods(ctx, []PodSpec{servePod("ns-1", "web", "a", 8080)}); err != nil {
		t.Fatal(err)
	}
	before, _ := listNetns(l.Prefix())
	tests := []struct {
		name string
		cfg  Config
	}{
		{name: "same name", cfg: Config{Name: l.Name(), Prefix: l.Prefix(), StateDir: l.StateDir()}},
		{name: "same prefix, other name", cfg: Config{Name: l.Name() + "-2", Prefix: l.Prefix(), StateDir: t.TempDir() + "/other"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.cfg.Nodes = []NodeConfig{{Name: "a", Role: "app"}}
			if _, err := Up(ctx, tt.cfg); !errors.Is(err, ErrAlreadyUp) {
				t.Fatalf("second Up: %v, want ErrAlreadyUp", err)
			}
		})
	}
	after, _ := listNetns(l.Prefix())
	if len(after) != len(before) {
		t.Errorf("namespaces %v after the refused Up, %v before", after, before)
	}
	if err := l.WaitReady(ctx); err != nil {
		t.Errorf("first lab harmed: %v", err)
	}
}

// A container whose first start fails is not left in its pod: a second
// AddContainer of that name starts it.
func TestIntegrationAddContainerFirstStartFails(t *testing.T) {
	l := newTestLab(t, NodeConfig{Name: "a", Role: "app"})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := l.CreatePods(ctx, []PodSpec{servePod("ns-1", "web", "a", 8080)}); err != nil {
		t.Fatal(err)
	}
	// exec refuses an environment holding a NUL byte: the first start
	// fails before any process runs.
	bad := ContainerSpec{Name: "istio-proxy", Command: []string{"sleep", "60"}, Env: []string{"BAD=a\x00b"}}
	if err := l.AddContainer(ctx, "ns-1", "web", bad); err == nil {
		t.Fatal("a container that cannot start was added")
	}
	p, _ := l.Pod("ns-1", "web")
	if len(p.Containers) != 1 {
		t.Fatalf("pod keeps %d containers after a failed start: %+v", len(p.Containers), p.Containers)
	}
	good := ContainerSpec{Name: "istio-proxy", Command: []string{"sleep", "60"}}
	if err := l.AddContainer(ctx, "ns-1", "web", good); err != nil {
		t.Fatalf("after a failed start: %v", err)
	}
	if err := l.RemoveContainer(ctx, "ns-1", "web", "istio-proxy"); err != nil {
		t.Fatal(err)
	}
}

// Each container keeps only the privileges its spec names: an app as a
// user with none (its program in a directory only root can enter), a
// proxy as 1337 with CAP_NET_ADMIN alone, and a root container with no
// capability; no_new_privs is set on all three.
func TestIntegrationContainerPrivileges(t *testing.T) {
	l := newTestLab(t, NodeConfig{Name: "a", Role: "app"})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	closed := t.TempDir()
	if err := os.Chmod(closed, 0o700); err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(closed, "app")
	b, err := os.ReadFile(helperBin(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(exe, b, 0o755); err != nil {
		t.Fatal(err)
	}
	pod := PodSpec{Namespace: "ns-1", Name: "priv", Node: "a", Containers: []ContainerSpec{
		{Name: "app", Command: []string{exe}, Env: []string{"MB_LAB_HELPER=serve", "PORT=8080"}, UID: 65532, GID: 65532,
			Readiness: &Probe{Port: 8080, Path: "/"}},
		{Name: "proxy", Command: []string{"sleep", "60"}, UID: 1337, GID: 1337, Caps: []string{"net_admin"}},
		{Name: "load", Command: []string{"sleep", "60"}},
	}}
	if err := l.CreatePods(ctx, []PodSpec{pod}); err != nil {
		t.Fatal(err)
	}
	if err := l.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	p, _ := l.Pod("ns-1", "priv")
	got := map[string]testenv.Privileges{}
	for _, c := range p.Containers {
		got[c.Name] = testenv.ProcPrivileges(t, c.PID)
	}
	if a := got["app"]; a.UID != "65532 65532 65532 65532" || a.GID != "65532 65532 65532 65532" || !a.Only() || !a.NoNewPrivs {
		t.Errorf("app: %+v, want user 65532 with no capability and no_new_privs", a)
	}
	if x := got["proxy"]; x.UID != "1337 1337 1337 1337" || !x.Only(testenv.CapNetAdmin) || !x.NoNewPrivs {
		t.Errorf("proxy: %+v, want user 1337 with CAP_NET_ADMIN alone and no_new_privs", x)
	}
	if x := got["load"]; x.UID != "0 0 0 0" || x.Effective != 0 || x.Permitted != 0 || x.Bounding != 0 || !x.NoNewPrivs {
		t.Errorf("load: %+v, want root with no capability and no_new_privs", x)
	}
}
