package cpstudy

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/meshbench/meshbench/internal/localkube"
)

// istioProxyVersion is what the synthetic proxies report as their Istio
// version: the VERSION file of that module.
const istioProxyVersion = "1.31.0"

// istiodBuild is a built istiod: its binary, Istio's CRDs and the module
// version it was built from.
type istiodBuild struct {
	Binary  string
	CRDs    string
	Version string
}

// findIstiod checks the build in dir and names the fix when it is missing.
func findIstiod(dir string) (istiodBuild, error) {
	b := istiodBuild{Binary: filepath.Join(dir, "bin", "pilot-discovery"), CRDs: filepath.Join(dir, "crds.yaml")}
	v, err := os.ReadFile(filepath.Join(dir, "version"))
	st, serr := os.Stat(b.Binary)
	_, cerr := os.Stat(b.CRDs)
	if err != nil || serr != nil || st.Mode()&0o111 == 0 || cerr != nil {
		return b, fmt.Errorf("istiod is not built in %s; build it with scripts/istiod-build.sh (or set %s)", dir, localkube.IstiodDirEnv)
	}
	b.Version = strings.TrimSpace(string(v))
	return b, nil
}

// Settings are istiod's push tuning, set explicitly and recorded with the
// results. The push throttle is what Istio chooses itself for one CPU
// (15+5*GOMAXPROCS); the request limit is raised from its one-CPU default
// of 20 new streams a second, which would otherwise make reconnecting
// 5,000 proxies take four minutes by design and hide what pushing costs.
type Settings struct {
	DebounceAfter   string `json:"PILOT_DEBOUNCE_AFTER"`
	DebounceMax     string `json:"PILOT_DEBOUNCE_MAX"`
	EDSDebounce     string `json:"PILOT_ENABLE_EDS_DEBOUNCE"`
	PushThrottle    string `json:"PILOT_PUSH_THROTTLE"`
	RequestsPerSec  string `json:"PILOT_MAX_REQUESTS_PER_SECOND"`
	GOMAXPROCS      string `json:"GOMAXPROCS"`
	Ambient         string `json:"PILOT_ENABLE_AMBIENT"`
	IstiodCPUs      string `json:"istiod_cpus"`
	OtherCPUs       string `json:"other_cpus"`
	ClientsPerConn  int    `json:"client_streams_per_connection"`
	ChangeInterval  string `json:"change_interval"`
	ChangeTimeout   string `json:"change_timeout"`
	SampleInterval  string `json:"sample_interval"`
	IstiodVersion   string `json:"istiod_version"`
	KubernetesBuild string `json:"kubernetes_version"`
}

func defaultSettings() Settings {
	return Settings{DebounceAfter: "100ms", DebounceMax: "10s", EDSDebounce: "true", PushThrottle: "20",
		RequestsPerSec: "1000", GOMAXPROCS: "1", KubernetesBuild: localkube.K8sVersion}
}

// istiod is one running istiod in the cluster's namespace, in its cgroup.
type istiod struct {
	build istiodBuild
	c     *localkube.Cluster
	cg    *cgroups
	env   []string
	args  []string
	cmd   *exec.Cmd
}

const (
	istiodReady   = "http://127.0.0.1:8080/ready"
	istiodMetrics = "http://127.0.0.1:15014/metrics"
	istiodXDS     = "127.0.0.1:15010"
)

func newIstiod(b istiodBuild, c *localkube.Cluster, cg *cgroups, s Settings) (*istiod, error) {
	dir := filepath.Join(c.Dir, "istiod")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	mesh := filepath.Join(dir, "mesh.yaml")
	if err := os.WriteFile(mesh, []byte("trustDomain: cluster.local\nrootNamespace: istio-system\n"), 0o644); err != nil {
		return nil, err
	}
	env := []string{
		"PATH=/usr/bin:/bin", "HOME=" + dir,
		"POD_NAMESPACE=istio-system", "POD_NAME=istiod-0", "REVISION=default", "CLUSTER_ID=Kubernetes",
		// No webhooks: istiod must not patch configurations that do not exist.
		"VALIDATION_WEBHOOK_CONFIG_NAME=", "INJECTION_WEBHOOK_CONFIG_NAME=",
		"PILOT_DEBOUNCE_AFTER=" + s.DebounceAfter, "PILOT_DEBOUNCE_MAX=" + s.DebounceMax,
		"PILOT_ENABLE_EDS_DEBOUNCE=" + s.EDSDebounce, "PILOT_PUSH_THROTTLE=" + s.PushThrottle,
		"PILOT_MAX_REQUESTS_PER_SECOND=" + s.RequestsPerSec, "GOMAXPROCS=" + s.GOMAXPROCS,
		"PILOT_ENABLE_AMBIENT=" + s.Ambient,
	}
	args := []string{"discovery", "--kubeconfig", c.Kubeconfig, "--meshConfig", mesh,
		"--networksConfig", filepath.Join(dir, "meshNetworks.yaml"),
		"--httpAddr", "127.0.0.1:8080", "--grpcAddr", istiodXDS, "--secureGRPCAddr", "127.0.0.1:15012",
		"--monitoringAddr", "127.0.0.1:15014", "--httpsAddr", "127.0.0.1:15017",
		"--log_output_level", "default:warn",
		// The study restarts istiod on purpose; a long drain only delays it.
		"--shutdownDuration", "1s"}
	return &istiod{build: b, c: c, cg: cg, env: env, args: args}, nil
}

// start runs istiod, moves it into its cgroup and waits until it is
// ready to serve.
func (d *istiod) start(ctx context.Context) error {
	cmd, err := d.c.StartProcess("istiod", d.build.Binary, d.env, d.args...)
	if err != nil {
		return err
	}
	d.cmd = cmd
	if err := d.cg.join("istiod", cmd.Process.Pid); err != nil {
		return err
	}
	if err := d.c.WaitHTTP(ctx, istiodReady, 3*time.Minute); err != nil {
		return fmt.Errorf("istiod not ready: %w; log tail:\n%s", err, d.c.LogTail("istiod", 20))
	}
	return nil
}

func (d *istiod) stop() {
	if d.cmd != nil {
		d.c.StopProcess(d.cmd, 15*time.Second)
		d.cmd = nil
	}
}

// metrics returns istiod's Prometheus metrics as text.
func (d *istiod) metrics(ctx context.Context) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, istiodMetrics, nil)
	if err != nil {
		return "", err
	}
	resp, err := d.c.HTTPClient(30 * time.Second).Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	return string(b), err
}
