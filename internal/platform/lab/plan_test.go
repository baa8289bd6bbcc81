package lab

import (
	"bytes"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/meshbench/meshbench/internal/infra"
	"github.com/meshbench/meshbench/internal/load"
	"github.com/meshbench/meshbench/internal/platform"
	"github.com/meshbench/meshbench/internal/platform/lab/cluster"
	"github.com/meshbench/meshbench/internal/topology"
)

func testNodes() []cluster.Node {
	return []cluster.Node{
		{Name: "app-1", Role: "app", IP: netip.MustParseAddr("10.255.0.1")},
		{Name: "app-2", Role: "app", IP: netip.MustParseAddr("10.255.0.2")},
		{Name: "load-1", Role: "load", IP: netip.MustParseAddr("10.255.0.3")},
	}
}

func tiered(t *testing.T) *topology.Graph {
	t.Helper()
	g, err := topology.Load("tiered")
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func TestPlanPods(t *testing.T) {
	t.Parallel()
	g := tiered(t)
	vips := map[string]string{}
	for _, ns := range []string{"ns-1", "ns-2"} {
		for i, s := range g.Services {
			vips[ns+"/"+s.Name] = "10.96.0." + string(rune('a'+i)) + ":8080"
		}
	}
	pods, err := planPods(platform.Workload{Graph: g, Namespaces: 2}, testNodes(), "/bin/mb", "/g.yaml", vips)
	if err != nil {
		t.Fatal(err)
	}
	if len(pods) != 2*(len(g.Deployments())+2) {
		t.Fatalf("%d pods, want the graph's deployments, a load pod and an outside client per namespace", len(pods))
	}
	byKey := map[string]cluster.PodSpec{}
	for _, p := range pods {
		byKey[p.Namespace+"/"+p.Name] = p
	}
	front := byKey["ns-2/"+g.Entry+"-0"]
	if len(front.Containers) != 1 {
		t.Fatalf("entry pod %+v", front)
	}
	cmd := strings.Join(front.Containers[0].Command, " ")
	for _, want := range []string{"/bin/mb app --graph /g.yaml --service " + g.Entry, "--namespace ns-2", "--listen :8080"} {
		if !strings.Contains(cmd, want) {
			t.Errorf("command %q lacks %q", cmd, want)
		}
	}
	for _, up := range g.Calls(g.Entry) {
		if !strings.Contains(cmd, "--upstream "+up+"="+vips["ns-2/"+up]) {
			t.Errorf("command %q lacks the upstream %s of its own namespace", cmd, up)
		}
	}
	if front.Labels[LabelApp] != g.Entry || front.Labels[LabelRole] != "app" || front.Containers[0].Readiness.Path != "/readyz" {
		t.Errorf("entry pod labels or probe: %+v", front)
	}
	for _, ns := range []string{"ns-1", "ns-2"} {
		lp := byKey[ns+"/"+LoadPodName]
		if lp.Node != "load-1" || len(lp.Containers) != 0 || lp.ServiceAccount != LoadServiceAccount {
			t.Errorf("load pod of %s: %+v", ns, lp)
		}
		// A connection search holds tens of thousands of connections to
		// one Service from this pod, trial after trial.
		if lp.Sysctls["net.ipv4.ip_local_port_range"] != "1024 65535" || lp.Sysctls["net.ipv4.ip_local_reserved_ports"] != "15000-15100" || lp.Sysctls["net.ipv4.tcp_tw_reuse"] != "1" {
			t.Errorf("load pod of %s sets sysctls %v, want the widest port range but the proxies' ports, and TIME_WAIT reuse", ns, lp.Sysctls)
		}
	}
	for _, p := range pods {
		if p.Node == "load-1" && p.Name != LoadPodName && p.Name != OutsidePodName {
			t.Errorf("app pod %s placed on the load node", p.Name)
		}
	}
}

// TestOutsideClientPlacement checks that the ingress path's client is a
// host-network pod (which no mesh captures) on the client node, else on a
// load node, never on an app node.
func TestOutsideClientPlacement(t *testing.T) {
	t.Parallel()
	withClient := append(testNodes(), cluster.Node{Name: "vm", Role: "client", IP: netip.MustParseAddr("10.255.0.4")})
	tests := []struct {
		name  string
		nodes []cluster.Node
		want  string
	}{
		{"on its own node", withClient, "vm"},
		{"on the load node without one", testNodes(), "load-1"},
	}
	for _, tt := range tests {
		pods, err := planPods(platform.Workload{Graph: tiered(t), Namespaces: 1}, tt.nodes, "/bin/mb", "/g.yaml", nil)
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, p := range pods {
			if p.Name != OutsidePodName {
				continue
			}
			found = true
			if p.Node != tt.want || !p.HostNetwork || len(p.Containers) != 0 || len(p.Sysctls) != 0 {
				t.Errorf("%s: outside client %+v, want a bare host-network pod on %s", tt.name, p, tt.want)
			}
		}
		if !found {
			t.Errorf("%s: no outside client", tt.name)
		}
	}
	if generatorPod(infra.PathIngress) != OutsidePodName || generatorPod(infra.PathService) != LoadPodName {
		t.Error("the ingress path's generators must run in the outside client, the service path's in the load pod")
	}
}

// Changing one service's replicas changes no other pod's placement or
// spec, so a redeploy keeps them.
func TestPlanPodsStableUnderReplicaChange(t *testing.T) {
	t.Parallel()
	g := tiered(t)
	w := platform.Workload{Graph: g, Namespaces: 3}
	before, _ := planPods(w, testNodes(), "/bin/mb", "/g.yaml", nil)
	w.Replicas = map[string]int{"tier-2-app-a": 3}
	after, _ := planPods(w, testNodes(), "/bin/mb", "/g.yaml", nil)
	if len(after) != len(before)+2*3 {
		t.Fatalf("%d pods after, %d before: want 2 more per namespace", len(after), len(before))
	}
	spec := map[string]string{}
	for _, p := range after {
		spec[p.Namespace+"/"+p.Name] = p.Labels[LabelSpec]
	}
	for _, p := range before {
		if spec[p.Namespace+"/"+p.Name] != p.Labels[LabelSpec] {
			t.Errorf("pod %s/%s changed", p.Namespace, p.Name)
		}
	}
	// Replicas of one deployment spread over both app nodes.
	nodes := map[string]bool{}
	for _, p := range after {
		if p.Namespace == "ns-1" && strings.HasPrefix(p.Name, "tier-2-app-a-") {
			nodes[p.Node] = true
		}
	}
	if len(nodes) != 2 {
		t.Errorf("tier-2-app-a replicas on %v, want both app nodes", nodes)
	}
}

func TestPlanPodsNeedsAppNode(t *testing.T) {
	t.Parallel()
	_, err := planPods(platform.Workload{Graph: tiered(t), Namespaces: 1}, testNodes()[2:], "/bin/mb", "/g.yaml", nil)
	if err == nil || !strings.Contains(err.Error(), "role app") {
		t.Errorf("err = %v, want one naming the missing app role", err)
	}
}

func TestGeneratorCommand(t *testing.T) {
	t.Parallel()
	body := filepath.Join(t.TempDir(), "body")
	o := load.Options{URL: "http://x/", Connections: 1, Method: "POST", Body: []byte{0, 0xff, '\n'}}
	got, err := generatorCommand("/mb", o, body)
	if err != nil {
		t.Fatal(err)
	}
	if want := append([]string{"/mb"}, load.Args(o, body)...); !slices.Equal(got, want) {
		t.Errorf("command\n%q\nwant\n%q", got, want)
	}
	if b, err := os.ReadFile(body); err != nil || !bytes.Equal(b, o.Body) {
		t.Errorf("body file holds %q (%v), want %q", b, err, o.Body)
	}
	if _, err := generatorCommand("/mb", load.Options{URL: "10.0.0.1"}, body); err == nil {
		t.Error("a URL without scheme was accepted")
	}
}

func TestLoadClusterFile(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		file    string
		wantErr string
	}{
		{name: "valid", file: "valid-cluster.yaml"},
		{name: "unknown role", file: "invalid-role.yaml", wantErr: `role "worker"`},
		{name: "unknown field", file: "invalid-field.yaml", wantErr: "cpu"},
		{name: "workload without app node", file: "invalid-no-app.yaml", wantErr: "role app"},
		{name: "missing", file: "nope.yaml", wantErr: "no such file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := LoadClusterFile(filepath.Join("testdata", tt.file))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if f.Name != "demo" || len(f.Nodes) != 2 || f.Nodes[1].CPUs != "1" || f.Workload.Namespaces != 1 {
				t.Errorf("file %+v", f)
			}
			// A graph file is found next to the cluster file.
			if f.Workload.Graph != filepath.Join("testdata", "graph.yaml") || f.Workload.Replicas["tier-2-app-a"] != 2 {
				t.Errorf("workload %+v", f.Workload)
			}
		})
	}
}

// Apps run as AppUID with no capability, but CAP_NET_BIND_SERVICE for a
// port below 1024.
func TestAppPodPrivileges(t *testing.T) {
	t.Parallel()
	g := tiered(t)
	node := testNodes()[0]
	tests := []struct {
		name string
		port int
		caps []string
	}{
		{name: "a high port", port: 8080},
		{name: "port 80", port: 80, caps: []string{"net_bind_service"}},
		{name: "port 1024", port: 1024},
	}
	for _, tt := range tests {
		d := g.Deployments()[0]
		d.Port = tt.port
		c := appPod(g, d, "ns-1", 0, node, "/bin/mb", "/g.yaml", nil).Containers[0]
		if c.UID != AppUID || c.GID != AppUID || !slices.Equal(c.Caps, tt.caps) {
			t.Errorf("%s: uid %d gid %d caps %q, want %d and %q", tt.name, c.UID, c.GID, c.Caps, AppUID, tt.caps)
		}
	}
}
