package lab

import (
	"context"
	"io"
	"net"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/meshbench/meshbench/internal/app"
	"github.com/meshbench/meshbench/internal/infra"
	"github.com/meshbench/meshbench/internal/metrics"
	"github.com/meshbench/meshbench/internal/platform/lab/cluster"
	"github.com/meshbench/meshbench/internal/topology"
)

// replicaCounts reads each app pod's count of answered requests
// (app.RequestsPath) from inside the pod, over loopback, which no mesh's
// capture takes. A pod that does not answer is left out: its count is not
// measured.
func replicaCounts(ctx context.Context, pods []cluster.Pod, g *topology.Graph) map[string]infra.ReplicaRequests {
	var mu sync.Mutex
	out := map[string]infra.ReplicaRequests{}
	var wg sync.WaitGroup
	sem := make(chan struct{}, 16)
	for _, p := range pods {
		svc := g.Service(p.Labels[LabelApp])
		if p.Labels[LabelRole] != string(metrics.RoleApp) || svc == nil {
			continue
		}
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			n, err := readCounter(ctx, p.Netns, svc.Port)
			if err != nil {
				return
			}
			mu.Lock()
			out[p.Key()] = infra.ReplicaRequests{Namespace: p.Namespace, Service: svc.Name, Pod: p.Name, Requests: n}
			mu.Unlock()
		})
	}
	wg.Wait()
	return out
}

func readCounter(ctx context.Context, netns string, port int) (int64, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	tr := &http.Transport{
		DisableKeepAlives: true,
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return cluster.DialIn(ctx, netns, "tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		},
	}
	defer tr.CloseIdleConnections()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://127.0.0.1"+app.RequestsPath, nil)
	if err != nil {
		return 0, err
	}
	resp, err := tr.RoundTrip(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 64))
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
}

// replicaDeltas are the requests each pod answered between two readings,
// sorted by namespace, service and pod.
func replicaDeltas(before, after map[string]infra.ReplicaRequests) []infra.ReplicaRequests {
	var out []infra.ReplicaRequests
	for k, a := range after {
		if b, ok := before[k]; ok && a.Requests >= b.Requests {
			a.Requests -= b.Requests
			out = append(out, a)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		x, y := out[i], out[j]
		if x.Namespace != y.Namespace {
			return x.Namespace < y.Namespace
		}
		if x.Service != y.Service {
			return x.Service < y.Service
		}
		return x.Pod < y.Pod
	})
	return out
}
