package cpstudy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"

	"github.com/meshbench/meshbench/internal/istiod"
	"github.com/meshbench/meshbench/internal/localkube"
	"github.com/meshbench/meshbench/internal/results"
	"github.com/meshbench/meshbench/internal/results/confined"
	"github.com/meshbench/meshbench/internal/xdsload"
)

// Name is the study's name, as `meshbench run --study` takes it.
const Name = "control-plane"

// ResultsFile is the raw data's file in the results directory.
const ResultsFile = "control-plane.json"

// maxResultsBytes bounds the raw data read back from a results directory,
// which may come from someone else: the default study writes well under
// 1 MB (a sample of about 80 bytes a second over its 17 minutes, and a
// few hundred bytes a change).
const maxResultsBytes = 64 << 20

// Mode is how the mesh's proxies are deployed.
type Mode string

// The modes the study compares.
const (
	Sidecar       Mode = "sidecar"        // a sidecar per pod, every service visible to every sidecar
	SidecarScoped Mode = "sidecar-scoped" // a sidecar per pod, each namespace's Sidecar showing only its own tier and the next
	Ambient       Mode = "ambient"        // a ztunnel per node
	// AmbientWaypoint is ambient with a waypoint per namespace, bound to
	// all of the namespace's services.
	AmbientWaypoint Mode = "ambient-waypoint"
)

// Modes lists every mode, in the study's order.
var Modes = []Mode{Sidecar, SidecarScoped, Ambient, AmbientWaypoint}

// DefaultModes are the modes the built-in study compares.
var DefaultModes = []Mode{Sidecar, SidecarScoped, Ambient}

// ambient is whether the mode has node proxies rather than sidecars.
func (m Mode) ambient() bool { return m == Ambient || m == AmbientWaypoint }

// Config is one run of the study.
type Config struct {
	Scales         []int         `json:"scales"` // pods, ascending
	Modes          []Mode        `json:"modes"`
	Changes        int           `json:"changes"`         // changes per scale point and mode
	ChangeInterval time.Duration `json:"change_interval"` // one change every interval: the churn rate
	ChangeTimeout  time.Duration `json:"change_timeout"`
	Idle           time.Duration `json:"idle"` // the quiet window after the initial push
	SampleInterval time.Duration `json:"sample_interval"`
	SyncTimeout    time.Duration `json:"sync_timeout"`

	Dir       string       `json:"-"` // results directory
	Resume    bool         `json:"-"` // continue the run in Dir, skipping the points it finished
	K8sBinDir string       `json:"-"`
	IstiodDir string       `json:"-"`
	Keep      bool         `json:"-"` // keep the cluster's working directory
	Log       *slog.Logger `json:"-"`
}

// DefaultConfig is the built-in study: 100, 1,000 and 5,000 pods, the
// default modes, one change a second. Its fixed phases are short (5 s
// idle, 16 changes, 20 s for a change to converge) because the full pushes
// to 5,000 unscoped sidecars, at start and after the restart, take most
// of the study's 20 minutes on a 2-core machine (docs/control-plane.md).
func DefaultConfig() Config {
	return Config{
		Scales: []int{100, 1000, 5000}, Modes: DefaultModes, Changes: 16,
		ChangeInterval: time.Second, ChangeTimeout: 20 * time.Second, Idle: 5 * time.Second,
		SampleInterval: time.Second, SyncTimeout: 10 * time.Minute,
		K8sBinDir: localkube.BinDir(), IstiodDir: localkube.IstiodDir(),
	}
}

// Sample is one reading of istiod's cgroup.
type Sample struct {
	T          float64 `json:"t_s"` // since the point started
	Phase      string  `json:"phase"`
	CPUCores   float64 `json:"cpu_cores"`
	WorkingSet int64   `json:"working_set_bytes"`
}

// Point is one scale point in one mode: the raw data the report reads.
type Point struct {
	Mode       Mode `json:"mode"`
	Pods       int  `json:"pods"`
	Services   int  `json:"services"`
	Namespaces int  `json:"namespaces"`
	Nodes      int  `json:"nodes"`
	Proxies    int  `json:"proxies"`
	// IstiodReady is from istiod's start until it reported ready.
	IstiodReady float64 `json:"istiod_ready_s"`
	// InitialSync is from connecting every proxy until the last held a
	// full configuration.
	InitialSync float64 `json:"initial_sync_s"`
	// RestartSync is from restarting istiod until every proxy, having
	// reconnected, held a full configuration again.
	RestartSync float64 `json:"restart_sync_s"`
	// RestartReady is the part of RestartSync until istiod reported ready.
	RestartReady float64 `json:"restart_ready_s"`
	// ConfigBytes is each proxy's configuration as first received.
	ConfigBytes []int64          `json:"config_bytes"`
	BytesByType map[string]int64 `json:"bytes_by_type"`
	Reconnects  int              `json:"reconnects"`
	Samples     []Sample         `json:"samples"`
	Changes     []ChangeResult   `json:"changes"`
	// IstiodMetrics are istiod's own histograms at the end of the churn,
	// summed over labels; MetricsFile holds its whole scrape.
	IstiodMetrics map[string]Histogram `json:"istiod_metrics"`
	MetricsFile   string               `json:"metrics_file"`
}

// Results is the study's raw data.
type Results struct {
	Study    string    `json:"study"`
	Started  time.Time `json:"started"`
	Finished time.Time `json:"finished,omitzero"`
	Config   Config    `json:"config"`
	Settings Settings  `json:"settings"`
	Points   []Point   `json:"points"`
}

// Check verifies everything the study needs before it creates anything.
func (c Config) Check() error {
	if err := c.validate(); err != nil {
		return err
	}
	if os.Geteuid() != 0 {
		return errors.New("control-plane study: needs root (network namespace, cgroups)")
	}
	if err := localkube.CheckBinaries(c.K8sBinDir); err != nil {
		return err
	}
	if _, err := istiod.Find(c.IstiodDir); err != nil {
		return err
	}
	if ents, err := os.ReadDir(c.Dir); !c.Resume && err == nil && len(ents) > 0 {
		return fmt.Errorf("control-plane study: results directory %s is not empty; continue a run there with --resume %s, or choose another --out", c.Dir, c.Dir)
	}
	return nil
}

// validate checks the study's own settings.
func (c Config) validate() error {
	if len(c.Scales) == 0 || len(c.Modes) == 0 {
		return errors.New("control-plane study: give at least one scale and one mode")
	}
	for i, s := range c.Scales {
		if s < podsPerService*2 || (i > 0 && s <= c.Scales[i-1]) {
			return fmt.Errorf("control-plane study: scales must be ascending and at least %d pods, got %v", podsPerService*2, c.Scales)
		}
	}
	for _, m := range c.Modes {
		if !slices.Contains(Modes, m) {
			return fmt.Errorf("control-plane study: unknown mode %q; modes are %v", m, Modes)
		}
	}
	if c.Changes < 0 || c.ChangeInterval <= 0 || c.ChangeTimeout <= 0 || c.SampleInterval <= 0 || c.SyncTimeout <= 0 {
		return errors.New("control-plane study: changes, intervals and timeouts must be positive")
	}
	// Bounds, as a resumed run's configuration comes from a results
	// directory that may be someone else's.
	if s := c.Scales[len(c.Scales)-1]; s > maxPods {
		return fmt.Errorf("control-plane study: %d pods, more than the %d of Kubernetes's scalability threshold", s, maxPods)
	}
	if c.Changes > maxChanges {
		return fmt.Errorf("control-plane study: %d changes, more than the %d a point may make", c.Changes, maxChanges)
	}
	for _, d := range []struct {
		name string
		d    time.Duration
	}{{"change interval", c.ChangeInterval}, {"change timeout", c.ChangeTimeout}, {"idle", c.Idle}, {"sample interval", c.SampleInterval}, {"sync timeout", c.SyncTimeout}} {
		if d.d > maxWait {
			return fmt.Errorf("control-plane study: %s %s, more than the %s any of its phases may take", d.name, d.d, maxWait)
		}
	}
	return nil
}

// Bounds on the study's configuration: Kubernetes's threshold of pods in
// a cluster (the default's largest point is 5,000), 10,000 changes a
// point (the default makes 16, one a second), and an hour for any one
// phase (the slowest, 5,000 unscoped sidecars' first push, took under 7
// minutes).
const (
	maxPods    = 150000
	maxChanges = 10000
	maxWait    = time.Hour
)

// Run runs the study into c.Dir, or with c.Resume the points of the run
// there that it did not finish, and writes its report there.
func Run(ctx context.Context, c Config) (*Results, error) {
	if c.Log == nil {
		c.Log = slog.New(slog.DiscardHandler)
	}
	build, err := istiod.Find(c.IstiodDir)
	if err != nil {
		return nil, err
	}
	res, c, done, lock, err := begin(c, build)
	if err != nil {
		return nil, err
	}
	defer lock.Release()
	cg, err := newCgroups(fmt.Sprintf("mbcp-%d", os.Getpid()))
	if err != nil {
		return nil, err
	}
	defer cg.remove()
	cluster, err := localkube.Start(ctx, localkube.Options{BinDir: c.K8sBinDir, Log: c.Log})
	if cluster != nil {
		defer cluster.Stop(c.Keep)
	}
	if err != nil {
		return nil, fmt.Errorf("local control plane: %w", err)
	}
	c.Log.Info("local control plane up", "dir", cluster.Dir, "keep", c.Keep)
	dyn, err := dynamic.NewForConfig(cluster.Config)
	if err != nil {
		return nil, err
	}
	k := kube{cs: cluster.Client, dyn: dyn}
	set := defaultSettings()
	set.IstiodVersion = build.Version
	set.IstiodCPUs, set.OtherCPUs = cg.Istiod, cg.Rest
	set.ClientsPerConn = streamsPerConn
	set.ChangeInterval, set.ChangeTimeout, set.SampleInterval = c.ChangeInterval.String(), c.ChangeTimeout.String(), c.SampleInterval.String()
	res.Settings = set
	if _, err := k.cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "istio-system"}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, err
	}
	if err := istiod.InstallCRDs(ctx, dyn, build.CRDs, gvrSidecar, gvrAuthz); err != nil {
		return nil, fmt.Errorf("istio CRDs: %w", err)
	}
	// In every mode, so that istiod watches the same kinds in all.
	if err := istiod.InstallCRDs(ctx, dyn, build.GatewayCRDs, gvrGateway); err != nil {
		return nil, fmt.Errorf("gateway API CRDs: %w", err)
	}
	s := &session{c: c, k: k, cluster: cluster, cg: cg, build: build, set: set}
	nodes := 0
	for i, pods := range c.Scales {
		var todo []Mode
		for _, m := range c.Modes {
			if !done[pointKey{m, pods}] {
				todo = append(todo, m)
			}
		}
		if len(todo) == 0 {
			c.Log.Info("already measured", "pods", pods)
			continue
		}
		l := newLayout(pods)
		if len(l.Nodes) > nodes {
			if err := cluster.AddNodes(ctx, "mb-node", nodes, len(l.Nodes)-nodes); err != nil {
				return nil, err
			}
			nodes = len(l.Nodes)
		}
		c.Log.Info("creating workload", "pods", pods, "services", len(l.Services), "namespaces", len(l.Namespaces), "nodes", len(l.Nodes))
		if err := k.create(ctx, &l); err != nil {
			return nil, err
		}
		for _, m := range todo {
			c.Log.Info("measuring", "pods", pods, "mode", m)
			p, err := s.point(ctx, &l, m)
			if err != nil {
				return nil, fmt.Errorf("%d pods, %s: %w", pods, m, err)
			}
			res.Points = append(res.Points, p)
			if err := results.WriteJSON(c.Dir, ResultsFile, res); err != nil {
				return nil, err
			}
		}
		if i+1 < len(c.Scales) {
			if err := k.remove(ctx, &l); err != nil {
				return nil, fmt.Errorf("remove the %d-pod workload: %w", pods, err)
			}
		}
	}
	res.Finished = time.Now().UTC()
	if err := results.WriteJSON(c.Dir, ResultsFile, res); err != nil {
		return nil, err
	}
	return res, WriteReport(c.Dir)
}

// streamsPerConn is how many synthetic proxies share a connection.
const streamsPerConn = 50

type session struct {
	c       Config
	k       kube
	cluster *localkube.Cluster
	cg      *cgroups
	build   istiod.Build
	set     Settings
}

// target is what a synthetic proxy is, for deciding which changes reach
// it: its kind and its namespace's tier (-1 for a node proxy).
type target struct {
	kind xdsload.Kind
	tier int
}

// proxies returns the synthetic proxies of a mode, and each one's target.
func proxies(l *layout, m Mode) ([]xdsload.Proxy, []target) {
	var ps []xdsload.Proxy
	var tiers []target
	if m.ambient() {
		for i, n := range l.Nodes {
			ip := fmt.Sprintf("10.63.%d.%d", i/250, i%250+1)
			name := "ztunnel-" + n
			ps = append(ps, xdsload.Proxy{Kind: xdsload.Ztunnel, Node: xdsload.Node{
				ID: "ztunnel~" + ip + "~" + name + ".istio-system~istio-system.svc.cluster.local",
				Metadata: map[string]any{"NAMESPACE": "istio-system", "NAME": name, "NODE_NAME": n, "CLUSTER_ID": "Kubernetes",
					"ISTIO_VERSION": istiod.ProxyVersion, "SERVICE_ACCOUNT": "ztunnel", "INSTANCE_IPS": ip},
			}})
			tiers = append(tiers, target{kind: xdsload.Ztunnel, tier: -1})
		}
		if m != AmbientWaypoint {
			return ps, tiers
		}
		for i, ns := range l.Namespaces {
			ip, name := l.WaypointIPs[ns], waypointName+"-0"
			labels := map[string]any{}
			for k, v := range waypointLabels() {
				labels[k] = v
			}
			ps = append(ps, xdsload.Proxy{Kind: xdsload.Waypoint, Node: xdsload.Node{
				ID: "waypoint~" + ip + "~" + name + "." + ns + "~" + ns + ".svc.cluster.local",
				Metadata: map[string]any{"NAMESPACE": ns, "NAME": name, "CLUSTER_ID": "Kubernetes",
					"ISTIO_VERSION": istiod.ProxyVersion, "SERVICE_ACCOUNT": "default", "INSTANCE_IPS": ip, "WORKLOAD_NAME": waypointName,
					"MESH_ID": "cluster.local", "LABELS": labels},
			}})
			tiers = append(tiers, target{kind: xdsload.Waypoint, tier: i})
		}
		return ps, tiers
	}
	for _, p := range l.PodList {
		ps = append(ps, xdsload.Proxy{Kind: xdsload.Sidecar, Node: xdsload.Node{
			ID: "sidecar~" + p.IP + "~" + p.Name + "." + p.Namespace + "~" + p.Namespace + ".svc.cluster.local",
			Metadata: map[string]any{"NAMESPACE": p.Namespace, "NAME": p.Name, "NODE_NAME": p.Node, "CLUSTER_ID": "Kubernetes",
				"ISTIO_VERSION": istiod.ProxyVersion, "SERVICE_ACCOUNT": "default", "INSTANCE_IPS": p.IP, "WORKLOAD_NAME": p.Name,
				"MESH_ID": "cluster.local", "INTERCEPTION_MODE": "REDIRECT",
				"LABELS": map[string]any{"app": p.Service, "security.istio.io/tlsMode": "istio"}},
		}})
		tiers = append(tiers, target{kind: xdsload.Sidecar, tier: p.Tier})
	}
	return ps, tiers
}

func (s *session) point(ctx context.Context, l *layout, m Mode) (Point, error) {
	p := Point{Mode: m, Pods: l.Pods, Services: len(l.Services), Namespaces: len(l.Namespaces), Nodes: len(l.Nodes)}
	if err := s.k.applyMode(ctx, l, m); err != nil {
		return p, err
	}
	set := s.set
	set.Ambient = strconv.FormatBool(m.ambient())
	d, err := istiod.New(s.build, istiod.Options{Cluster: s.cluster, Dir: filepath.Join(s.cluster.Dir, "istiod"),
		Env: set.env(), Place: func(pid int) error { return s.cg.join("istiod", pid) }})
	if err != nil {
		return p, err
	}
	defer d.Stop()
	smp := startSampler(s.cg, s.c.SampleInterval, "startup")
	defer smp.stop()
	t0 := time.Now()
	if err := d.Start(ctx); err != nil {
		return p, err
	}
	p.IstiodReady = time.Since(t0).Seconds()

	ps, targets := proxies(l, m)
	p.Proxies = len(ps)
	tr := &tracker{}
	fleet, err := xdsload.NewFleet(xdsload.Options{Addr: istiod.XDS, Dial: s.cluster.Netns.DialContext,
		StreamsPerConn: streamsPerConn, OnResponse: tr.onResponse, Log: s.c.Log}, ps)
	if err != nil {
		return p, err
	}
	defer fleet.Close()
	smp.setPhase("sync")
	t1 := time.Now()
	fleet.Start(ctx)
	if err := s.waitSynced(ctx, fleet, t1); err != nil {
		return p, fmt.Errorf("initial push: %w; istiod log tail:\n%s", err, s.cluster.LogTail("istiod", 10))
	}
	p.InitialSync = lastSync(fleet).Sub(t1).Seconds()
	for _, st := range fleet.Stats() {
		p.ConfigBytes = append(p.ConfigBytes, st.ConfigBytes)
	}

	smp.setPhase("idle")
	select {
	case <-ctx.Done():
		return p, ctx.Err()
	case <-time.After(s.c.Idle):
	}

	smp.setPhase("churn")
	ch := &churn{k: s.k, l: l, mode: m, targets: targets, tr: tr, timeout: s.c.ChangeTimeout}
	if p.Changes, err = ch.run(ctx, s.c.Changes, s.c.ChangeInterval); err != nil {
		return p, err
	}
	text, err := d.Metrics(ctx)
	if err != nil {
		return p, fmt.Errorf("istiod metrics: %w", err)
	}
	p.MetricsFile = fmt.Sprintf("istiod-metrics-%s-%d.prom", m, l.Pods)
	if err := results.WriteFile(s.c.Dir, p.MetricsFile, []byte(text)); err != nil {
		return p, err
	}
	p.IstiodMetrics = parseHistograms(text, istiodHistograms)
	if err := ch.undo(ctx); err != nil {
		return p, err
	}

	smp.setPhase("restart")
	d.Stop()
	t2 := time.Now()
	if err := d.Start(ctx); err != nil {
		return p, err
	}
	p.RestartReady = time.Since(t2).Seconds()
	if err := s.waitSynced(ctx, fleet, t2); err != nil {
		return p, fmt.Errorf("push after restart: %w", err)
	}
	p.RestartSync = lastSync(fleet).Sub(t2).Seconds()
	p.BytesByType = map[string]int64{}
	for _, st := range fleet.Stats() {
		p.Reconnects += st.Reconnects
		for k, v := range st.BytesByType {
			p.BytesByType[k] += v
		}
	}
	p.Samples = smp.stop()
	return p, nil
}

// waitSynced waits until every proxy has synced on a stream it opened
// after since.
func (s *session) waitSynced(ctx context.Context, f *xdsload.Fleet, since time.Time) error {
	ctx, cancel := context.WithTimeout(ctx, s.c.SyncTimeout)
	defer cancel()
	return f.WaitSyncedSince(ctx, since)
}

func lastSync(f *xdsload.Fleet) time.Time {
	var last time.Time
	for _, st := range f.Stats() {
		if st.SyncedAt.After(last) {
			last = st.SyncedAt
		}
	}
	return last
}

// sampler reads istiod's cgroup at a fixed interval.
type sampler struct {
	cg    *cgroups
	start time.Time
	quit  chan struct{}
	done  chan struct{}

	mu      sync.Mutex
	phase   string
	samples []Sample
	stopped bool
}

func startSampler(cg *cgroups, interval time.Duration, phase string) *sampler {
	s := &sampler{cg: cg, start: time.Now(), quit: make(chan struct{}), done: make(chan struct{}), phase: phase}
	go func() {
		defer close(s.done)
		t := time.NewTicker(interval)
		defer t.Stop()
		last, lastT := uint64(0), time.Time{}
		for {
			if u, err := cg.read("istiod"); err == nil {
				now := time.Now()
				if !lastT.IsZero() && u.CPUNanos >= last {
					s.mu.Lock()
					s.samples = append(s.samples, Sample{T: now.Sub(s.start).Seconds(), Phase: s.phase,
						CPUCores: float64(u.CPUNanos-last) / float64(now.Sub(lastT).Nanoseconds()), WorkingSet: u.WorkingSet})
					s.mu.Unlock()
				}
				last, lastT = u.CPUNanos, now
			}
			select {
			case <-s.quit:
				return
			case <-t.C:
			}
		}
	}()
	return s
}

func (s *sampler) setPhase(p string) {
	s.mu.Lock()
	s.phase = p
	s.mu.Unlock()
}

func (s *sampler) stop() []Sample {
	s.mu.Lock()
	if !s.stopped {
		s.stopped = true
		close(s.quit)
	}
	s.mu.Unlock()
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.samples)
}

// ReadResults reads a results directory's raw data.
func ReadResults(dir string) (*Results, error) {
	b, err := confined.ReadFile(dir, ResultsFile, maxResultsBytes)
	if err != nil {
		return nil, err
	}
	var r Results
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, ResultsFile), err)
	}
	if r.Study != Name {
		return nil, fmt.Errorf("%s: not a control-plane study's results", dir)
	}
	return &r, nil
}
