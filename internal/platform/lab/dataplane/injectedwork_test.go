package dataplane

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/meshbench/meshbench/internal/platform/lab/dataplane/envoycfg"
	"github.com/meshbench/meshbench/internal/testenv"
)

// TestInjectedWorkIsInboundOnly checks that injected_work puts the Lua
// loop first in every inbound chain, before the L7 policy and the router,
// and nowhere else: the outbound side and a sidecar without it are as
// before, so that an A/B pair differs in that filter alone.
func TestInjectedWorkIsInboundOnly(t *testing.T) {
	t.Parallel()
	inv := fixture()
	v := newView(inv)
	pod := podNamed(&inv, "tier-2-app-a-0")
	filters := func(p *proxy, listener string) [][]string {
		var out [][]string
		for _, ch := range findListener(p, listener).FilterChains {
			for _, f := range ch.Filters {
				h, ok := f.TypedConfig.Value.(envoycfg.HCM)
				if !ok {
					continue
				}
				var names []string
				for _, hf := range h.HTTPFilters {
					names = append(names, hf.Name)
				}
				out = append(out, names)
			}
		}
		return out
	}
	with := buildSidecar(v, pod, Settings{Workers: 2, InjectedWork: 5000}, "/m/sidecar", true)
	in := filters(with, "virtualInbound")
	if len(in) == 0 {
		t.Fatal("no inbound HTTP connection manager")
	}
	for _, names := range in {
		if want := []string{"envoy.filters.http.lua", "envoy.filters.http.rbac", "envoy.filters.http.router"}; !slices.Equal(names, want) {
			t.Errorf("inbound filters %v, want %v", names, want)
		}
	}
	src := findListener(with, "virtualInbound").FilterChains[0].Filters[0].TypedConfig.Value.(envoycfg.HCM).
		HTTPFilters[0].TypedConfig.Value.(map[string]any)["default_source_code"].(envoycfg.DataSource).InlineString
	if !strings.Contains(src, "for i = 1, 5000 do") {
		t.Errorf("Lua source does not loop 5000 times:\n%s", src)
	}
	without := buildSidecar(v, pod, Settings{Workers: 2}, "/m/sidecar", true)
	for _, l := range with.Boot.StaticResources.Listeners {
		if l.Name == "virtualInbound" {
			continue
		}
		if !slices.EqualFunc(filters(with, l.Name), filters(without, l.Name), slices.Equal[[]string]) {
			t.Errorf("listener %s changed: %v against %v", l.Name, filters(with, l.Name), filters(without, l.Name))
		}
	}
	for _, names := range filters(without, "virtualInbound") {
		if slices.Contains(names, "envoy.filters.http.lua") {
			t.Errorf("a sidecar without injected work runs Lua: %v", names)
		}
	}
}

// TestIntegrationInjectedWorkCosts has Envoy accept a sidecar with the
// injected work, then runs the same Lua filter in a real Envoy on one of
// two listeners that answer directly, requests alternating between them,
// and checks that the loop adds latency in proportion to its length. The
// log gives the cost per million iterations on this host, from which a
// study picks its dose (docs/meshes.md).
func TestIntegrationInjectedWorkCosts(t *testing.T) {
	testenv.Integration(t)
	ca, err := NewCA()
	if err != nil {
		t.Fatal(err)
	}
	inv := fixture()
	validateConfig(t, ca, buildSidecar(newView(inv), podNamed(&inv, "tier-2-app-a-0"), Settings{Workers: 2, InjectedWork: 100_000}, t.TempDir(), true))

	bin, err := FindEnvoy()
	testenv.Need(t, err == nil, "Envoy (scripts/setup.sh installs it into .venv; MESHBENCH_ENVOY names it): %v", err)
	const work = 1_000_000
	ports := []int{freePort(t), freePort(t)}
	listener := func(port int, filters ...envoycfg.Extension) map[string]any {
		return map[string]any{
			"name":    fmt.Sprintf("l%d", port),
			"address": map[string]any{"socket_address": map[string]any{"address": "127.0.0.1", "port_value": port}},
			"filter_chains": []any{map[string]any{"filters": []any{map[string]any{
				"name": "envoy.filters.network.http_connection_manager",
				"typed_config": map[string]any{
					"@type":       "type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager",
					"stat_prefix": "t",
					"route_config": map[string]any{"virtual_hosts": []any{map[string]any{
						"name": "all", "domains": []string{"*"},
						"routes": []any{map[string]any{"match": map[string]any{"prefix": "/"},
							"direct_response": map[string]any{"status": 200, "body": map[string]any{"inline_string": "ok"}}}},
					}}},
					"http_filters": append(filters, envoycfg.Router()),
				},
			}}}},
		}
	}
	cfg, err := json.Marshal(map[string]any{"static_resources": map[string]any{"listeners": []any{
		listener(ports[0]), listener(ports[1], injectedWork(work)),
	}}})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "envoy.json")
	if err := os.WriteFile(path, cfg, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "-c", path, "--disable-hot-restart", "--concurrency", "1", "-l", "error")
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()

	client := &http.Client{Timeout: 5 * time.Second}
	get := func(port int) (time.Duration, error) {
		start := time.Now()
		resp, err := client.Get(fmt.Sprintf("http://127.0.0.1:%d/", port))
		if err != nil {
			return 0, err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return 0, fmt.Errorf("status %d", resp.StatusCode)
		}
		return time.Since(start), nil
	}
	for _, port := range ports {
		for {
			if _, err := get(port); err == nil {
				break
			} else if ctx.Err() != nil {
				t.Fatalf("envoy never answered on %d: %v", port, err)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	// Alternate so that whatever else the host runs falls on both alike;
	// the medians shrug off the odd preempted request.
	var plain, worked []time.Duration
	for range 40 {
		for i, port := range ports {
			d, err := get(port)
			if err != nil {
				t.Fatal(err)
			}
			if i == 0 {
				plain = append(plain, d)
			} else {
				worked = append(worked, d)
			}
		}
	}
	slices.Sort(plain)
	slices.Sort(worked)
	added := worked[len(worked)/2] - plain[len(plain)/2]
	t.Logf("p50 %v without, %v with %d iterations: %.3f ms per million iterations", plain[len(plain)/2], worked[len(worked)/2], work, float64(added)/float64(time.Millisecond)*1e6/work)
	// A million iterations of LuaJIT's loop are a millisecond or more on
	// any host meshbench runs on; a filter that did not run adds nothing.
	if added < 300*time.Microsecond {
		t.Errorf("the injected work added %v to the p50; want at least 0.3 ms from %d iterations", added, work)
	}
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
