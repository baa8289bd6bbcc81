package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"slices"
	"time"

	"github.com/spf13/cobra"

	"github.com/meshbench/meshbench/internal/xdsload"
)

type xdsLoadFlags struct {
	addr      string
	sidecars  int
	ztunnels  int
	namespace string
	hold      time.Duration
	timeout   time.Duration
	output    string
}

func newXDSLoadCmd(s Streams, g *globals) *cobra.Command {
	var f xdsLoadFlags
	cmd := &cobra.Command{
		Use:   "xds-load",
		Short: "Play a mesh's proxies against a running istiod: synthetic sidecars and ztunnels over plaintext xDS",
		Long: `Connect synthetic proxies to an istiod's plaintext xDS port and report how
long they took to receive a full configuration and how many bytes each
received: --sidecars subscribe as Envoy sidecars (clusters, listeners,
then their endpoints and routes), --ztunnels as ambient node proxies
(workload addresses and authorizations over delta xDS). Every response is
ACKed; no configuration is applied. They hold their streams for --hold,
so that istiod's CPU and memory can be watched meanwhile.

This is the client half of 'meshbench run --study control-plane', for a
real cluster: run it as a Job inside the cluster, next to istiod (see
docs/control-plane.md). The sidecars claim addresses 10.254.x.y, which no
pod holds, so istiod gives them outbound configuration only.`,
		Example: `  meshbench xds-load --addr istiod.istio-system.svc:15010 --sidecars 500 --hold 2m
  meshbench xds-load --addr 127.0.0.1:15010 --ztunnels 10 -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runXDSLoad(cmd.Context(), s, g, f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.addr, "addr", "istiod.istio-system.svc:15010", "istiod's plaintext xDS address")
	fl.IntVar(&f.sidecars, "sidecars", 0, "synthetic sidecars")
	fl.IntVar(&f.ztunnels, "ztunnels", 0, "synthetic ztunnels")
	fl.StringVar(&f.namespace, "namespace", "default", "the sidecars' namespace")
	fl.DurationVar(&f.hold, "hold", 30*time.Second, "how long to stay connected after every proxy synced")
	fl.DurationVar(&f.timeout, "timeout", 10*time.Minute, "how long every proxy may take to sync")
	outputFlag(fl, &f.output, "output format: text or json", outText, outJSON)
	return cmd
}

// xdsLoadReport is what xds-load prints.
type xdsLoadReport struct {
	Addr        string  `json:"addr"`
	Sidecars    int     `json:"sidecars"`
	Ztunnels    int     `json:"ztunnels"`
	SyncSeconds float64 `json:"sync_s"`
	BytesP50    int64   `json:"config_bytes_p50"`
	BytesMax    int64   `json:"config_bytes_max"`
	Reconnects  int     `json:"reconnects"`
}

func runXDSLoad(ctx context.Context, s Streams, g *globals, f xdsLoadFlags) error {
	if f.sidecars < 0 || f.ztunnels < 0 || f.sidecars+f.ztunnels == 0 || f.sidecars+f.ztunnels > 60000 {
		return fmt.Errorf("--sidecars %d, --ztunnels %d: want between 1 and 60000 proxies in all", f.sidecars, f.ztunnels)
	}
	var ps []xdsload.Proxy
	for i := range f.sidecars {
		ip := fmt.Sprintf("10.254.%d.%d", i/250, i%250+1)
		name := fmt.Sprintf("mb-xds-%d", i)
		ps = append(ps, xdsload.Proxy{Kind: xdsload.Sidecar, Node: xdsload.Node{
			ID:       "sidecar~" + ip + "~" + name + "." + f.namespace + "~" + f.namespace + ".svc.cluster.local",
			Metadata: map[string]any{"NAMESPACE": f.namespace, "NAME": name, "CLUSTER_ID": "Kubernetes", "INSTANCE_IPS": ip, "ISTIO_VERSION": "1.31.0"},
		}})
	}
	for i := range f.ztunnels {
		ip := fmt.Sprintf("10.253.%d.%d", i/250, i%250+1)
		name := fmt.Sprintf("mb-ztunnel-%d", i)
		ps = append(ps, xdsload.Proxy{Kind: xdsload.Ztunnel, Node: xdsload.Node{
			ID:       "ztunnel~" + ip + "~" + name + ".istio-system~istio-system.svc.cluster.local",
			Metadata: map[string]any{"NAMESPACE": "istio-system", "NAME": name, "NODE_NAME": name, "CLUSTER_ID": "Kubernetes", "ISTIO_VERSION": "1.31.0"},
		}})
	}
	var d net.Dialer
	fleet, err := xdsload.NewFleet(xdsload.Options{Addr: f.addr, Dial: d.DialContext, StreamsPerConn: 50, Log: g.logger(s)}, ps)
	if err != nil {
		return err
	}
	defer fleet.Close()
	start := time.Now()
	fleet.Start(ctx)
	sctx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	if err := fleet.WaitSyncedSince(sctx, start); err != nil {
		return fmt.Errorf("%s: %w", f.addr, err)
	}
	r := xdsLoadReport{Addr: f.addr, Sidecars: f.sidecars, Ztunnels: f.ztunnels}
	var bytes []int64
	for _, st := range fleet.Stats() {
		r.SyncSeconds = max(r.SyncSeconds, st.SyncedAt.Sub(start).Seconds())
		bytes = append(bytes, st.ConfigBytes)
	}
	slices.Sort(bytes)
	r.BytesP50, r.BytesMax = bytes[(len(bytes)-1)/2], bytes[len(bytes)-1]
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(f.hold):
	}
	for _, st := range fleet.Stats() {
		r.Reconnects += st.Reconnects
	}
	if f.output == "json" {
		enc := json.NewEncoder(s.Out)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	}
	_, err = fmt.Fprintf(s.Out, "%d sidecars and %d ztunnels synced from %s in %.2fs; config bytes per proxy p50 %d, max %d; %d reconnects while holding %s\n",
		r.Sidecars, r.Ztunnels, r.Addr, r.SyncSeconds, r.BytesP50, r.BytesMax, r.Reconnects, f.hold)
	return err
}
