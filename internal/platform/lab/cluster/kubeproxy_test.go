package cluster

import (
	"context"
	"net/netip"
	"strings"
	"sync"
	"testing"
)

func ep(s string) netip.AddrPort { return netip.MustParseAddrPort(s) }

func TestRenderServices(t *testing.T) {
	t.Parallel()
	web := svcRule{Key: "ns-1/web", VIP: netip.MustParseAddr("10.96.0.10"), Port: 80,
		Endpoints: []netip.AddrPort{ep("10.244.1.2:8080"), ep("10.244.1.3:8080"), ep("10.244.2.2:8080")}}
	empty := svcRule{Key: "ns-1/empty", VIP: netip.MustParseAddr("10.96.0.11"), Port: 80}
	got, used := renderServices([]svcRule{web, empty}, nil)
	sc := svcChain(web)
	e := []string{sepChain(web, web.Endpoints[0]), sepChain(web, web.Endpoints[1]), sepChain(web, web.Endpoints[2])}
	want := strings.Join([]string{
		"*nat",
		":MB-SERVICES - [0:0]",
		":" + sc + " - [0:0]",
		":" + e[0] + " - [0:0]",
		":" + e[1] + " - [0:0]",
		":" + e[2] + " - [0:0]",
		`-A MB-SERVICES -d 10.96.0.10/32 -p tcp -m tcp --dport 80 -m comment --comment "ns-1/web" -j ` + sc,
		"-A " + sc + " -m statistic --mode random --probability 0.3333333333 -j " + e[0],
		"-A " + e[0] + " -s 10.244.1.2/32 -j MARK --set-xmark 0x4000/0x4000",
		"-A " + e[0] + " -p tcp -m tcp -j DNAT --to-destination 10.244.1.2:8080",
		"-A " + sc + " -m statistic --mode random --probability 0.5000000000 -j " + e[1],
		"-A " + e[1] + " -s 10.244.1.3/32 -j MARK --set-xmark 0x4000/0x4000",
		"-A " + e[1] + " -p tcp -m tcp -j DNAT --to-destination 10.244.1.3:8080",
		"-A " + sc + " -j " + e[2],
		"-A " + e[2] + " -s 10.244.2.2/32 -j MARK --set-xmark 0x4000/0x4000",
		"-A " + e[2] + " -p tcp -m tcp -j DNAT --to-destination 10.244.2.2:8080",
		"COMMIT", "",
	}, "\n")
	if string(got) != want {
		t.Errorf("rules:\n%s\nwant:\n%s", got, want)
	}
	if len(used) != 4 || !used[sc] {
		t.Errorf("used chains %v", used)
	}

	// One endpoint fewer: its chain is flushed and deleted, the rest stay.
	web.Endpoints = web.Endpoints[:2]
	got, used = renderServices([]svcRule{web}, used)
	s := string(got)
	if !strings.Contains(s, ":"+e[2]+" - [0:0]\n") || !strings.HasSuffix(s, "-X "+e[2]+"\nCOMMIT\n") {
		t.Errorf("stale endpoint chain not deleted:\n%s", s)
	}
	if strings.Contains(s, "-X "+sc) || used[e[2]] || len(used) != 3 {
		t.Errorf("wrong chains deleted or kept: %v\n%s", used, s)
	}
	if !strings.Contains(s, "--probability 0.5000000000 -j "+e[0]) {
		t.Errorf("probabilities not recomputed:\n%s", s)
	}
}

func TestChainNamesFitIptables(t *testing.T) {
	t.Parallel()
	s := svcRule{Key: "a-very-long-namespace-name/a-very-long-service-name", Port: 65535}
	for _, c := range []string{svcChain(s), sepChain(s, ep("10.244.250.254:65535"))} {
		if len(c) > 28 {
			t.Errorf("chain %s is %d characters, iptables allows 28", c, len(c))
		}
	}
	if svcChain(s) == svcChain(svcRule{Key: s.Key, Port: 80}) {
		t.Error("ports share a chain")
	}
}

func TestRenderBase(t *testing.T) {
	t.Parallel()
	got := string(renderBase(netip.MustParseAddr("10.255.0.2")))
	for _, want := range []string{
		"-I PREROUTING 1 ", "-j MB-SERVICES\n", "-I OUTPUT 1 ",
		"-A MB-POSTROUTING -m mark --mark 0x4000/0x4000 -j SNAT --to-source 10.255.0.2\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("base rules lack %q:\n%s", want, got)
		}
	}
}

// recorder is a Runner that records commands instead of running them.
type recorder struct {
	mu   sync.Mutex
	cmds []Cmd
}

func (r *recorder) Run(_ context.Context, c Cmd) ([]byte, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.cmds = append(r.cmds, c)
	return nil, nil
}

// The proxier applies the same rules to every node's namespace, with only
// ready pods that match the selector as endpoints, and skips a sync that
// would change nothing.
func TestProxierSyncsReadyEndpointsToEveryNode(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	l := &Lab{cfg: Config{Runner: rec}, pods: map[string]*pod{}, services: map[string]*service{}, vips: serviceAllocator()}
	l.log = discardLogger()
	for i, name := range []string{"a", "b"} {
		l.nodes = append(l.nodes, &node{NodeConfig: NodeConfig{Name: name}, index: i + 1, netns: "mbx-n-" + name})
	}
	mk := func(name, ip string, labels map[string]string, ready bool) {
		p := &pod{lab: l, spec: PodSpec{Namespace: "ns-1", Name: name, Labels: labels}, node: l.nodes[0], ip: netip.MustParseAddr(ip)}
		p.containers = []*container{{spec: ContainerSpec{Name: "c"}, running: ready, ready: ready}}
		l.pods[p.key()] = p
	}
	mk("web-0", "10.244.1.2", map[string]string{"app": "web"}, true)
	mk("web-1", "10.244.1.3", map[string]string{"app": "web"}, false)
	mk("db-0", "10.244.1.4", map[string]string{"app": "db"}, true)
	svc, err := l.ApplyService(context.Background(), ServiceSpec{Namespace: "ns-1", Name: "web", Selector: map[string]string{"app": "web"}, Port: 80, TargetPort: 8080})
	if err != nil {
		t.Fatal(err)
	}
	if svc.VIP.String() != "10.96.0.10" || len(svc.Endpoints) != 1 {
		t.Fatalf("service %+v", svc)
	}
	p := newProxier(l)
	if err := p.sync(); err != nil {
		t.Fatal(err)
	}
	if len(rec.cmds) != 2 {
		t.Fatalf("%d commands, want one per node: %v", len(rec.cmds), rec.cmds)
	}
	nodes := map[string]bool{}
	for _, c := range rec.cmds {
		nodes[c.Netns] = true
		if strings.Join(c.Args, " ") != "iptables-restore --noflush --wait" {
			t.Errorf("command %v", c.Args)
		}
		in := string(c.Stdin)
		if !strings.Contains(in, "--to-destination 10.244.1.2:8080") || strings.Contains(in, "10.244.1.3") || strings.Contains(in, "10.244.1.4") {
			t.Errorf("endpoints wrong:\n%s", in)
		}
	}
	if !nodes["mbx-n-a"] || !nodes["mbx-n-b"] {
		t.Errorf("nodes %v", nodes)
	}
	if !p.syncedTo(l.version) {
		t.Error("not marked synced")
	}
	if err := p.sync(); err != nil || len(rec.cmds) != 2 {
		t.Errorf("an unchanged sync ran commands: %d, %v", len(rec.cmds), err)
	}
	// web-1 becomes ready: both endpoints on every node.
	l.pods["ns-1/web-1"].containers[0].ready = true
	l.pods["ns-1/web-1"].containers[0].running = true
	if err := p.sync(); err != nil {
		t.Fatal(err)
	}
	if len(rec.cmds) != 4 || !strings.Contains(string(rec.cmds[3].Stdin), "10.244.1.3:8080") {
		t.Errorf("readiness change not synced: %d commands", len(rec.cmds))
	}
}
