package istiod

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/meshbench/meshbench/internal/localkube"
)

// istiod's addresses inside the cluster's network namespace.
const (
	// XDS is istiod's plaintext xDS port: unauthenticated, and so what
	// proxies without workload certificates reach.
	XDS        = "127.0.0.1:15010"
	readyURL   = "http://127.0.0.1:8080/ready"
	metricsURL = "http://127.0.0.1:15014/metrics"
)

// SystemNamespace is istiod's own namespace and the mesh's root namespace.
const SystemNamespace = "istio-system"

// Options say how to run istiod.
type Options struct {
	Cluster *localkube.Cluster // the API server istiod reads, and the network namespace it runs in
	Dir     string             // istiod's working directory: its mesh config and HOME
	// MeshConfig is the mesh configuration's YAML; empty is the trust
	// domain and root namespace only, Istio's defaults otherwise.
	MeshConfig string
	// Env is added to istiod's environment: PILOT_* settings, GOMAXPROCS.
	Env []string
	// Place, when set, is called with istiod's pid as soon as it runs,
	// to put it in a cgroup of its own.
	Place func(pid int) error
}

// Istiod is one istiod in a local cluster; Start and Stop may alternate.
type Istiod struct {
	build Build
	o     Options
	env   []string
	args  []string
	cmd   *exec.Cmd
}

// New prepares istiod's working directory.
func New(b Build, o Options) (*Istiod, error) {
	if err := os.MkdirAll(o.Dir, 0o755); err != nil {
		return nil, err
	}
	mc := o.MeshConfig
	if mc == "" {
		mc = "trustDomain: cluster.local\nrootNamespace: " + SystemNamespace + "\n"
	}
	mesh := filepath.Join(o.Dir, "mesh.yaml")
	if err := os.WriteFile(mesh, []byte(mc), 0o644); err != nil {
		return nil, err
	}
	// istiod may run as the control plane's user: the log it names and
	// its home (Command, Start) are that user's.
	if _, err := o.Cluster.UserFile("istiod.log"); err != nil {
		return nil, err
	}
	env := append([]string{
		"PATH=/usr/bin:/bin", "HOME=" + o.Cluster.Home(),
		"POD_NAMESPACE=" + SystemNamespace, "POD_NAME=istiod-0", "REVISION=default", "CLUSTER_ID=Kubernetes",
		// No webhooks: istiod must not patch configurations that do not exist.
		"VALIDATION_WEBHOOK_CONFIG_NAME=", "INJECTION_WEBHOOK_CONFIG_NAME=",
	}, o.Env...)
	args := []string{"discovery", "--kubeconfig", o.Cluster.Kubeconfig, "--meshConfig", mesh,
		"--networksConfig", filepath.Join(o.Dir, "meshNetworks.yaml"),
		"--httpAddr", "127.0.0.1:8080", "--grpcAddr", XDS, "--secureGRPCAddr", "127.0.0.1:15012",
		"--monitoringAddr", "127.0.0.1:15014", "--httpsAddr", "127.0.0.1:15017",
		"--log_output_level", "default:warn",
		// Nothing here needs a graceful drain; a long one only delays a
		// stop or a restart.
		"--shutdownDuration", "1s"}
	return &Istiod{build: b, o: o, env: env, args: args}, nil
}

// Start runs istiod, places it, and waits until it is ready to serve.
func (d *Istiod) Start(ctx context.Context) error {
	cmd, err := d.o.Cluster.StartProcess("istiod", d.build.Binary, d.env, d.args...)
	if err != nil {
		return err
	}
	d.cmd = cmd
	if d.o.Place != nil {
		if err := d.o.Place(cmd.Process.Pid); err != nil {
			return fmt.Errorf("place istiod: %w", err)
		}
	}
	return d.WaitReady(ctx)
}

// Command is istiod's command line for a launcher of its own, such as the
// lab, which runs istiod as one of its pods to measure it, as root with
// localkube.LauncherCaps: istiod with its environment alone, in the
// cluster's network namespace (which holds only loopback) as the control
// plane's user, logging where Start's istiod logs. The launcher stops it,
// and learns from WaitReady when it serves.
func (d *Istiod) Command() []string {
	return d.o.Cluster.UserCommand(d.build.Binary, d.env, append(d.args, "--log_target", filepath.Join(d.o.Cluster.Dir, "istiod.log"))...)
}

// WaitReady waits until istiod is ready to serve.
func (d *Istiod) WaitReady(ctx context.Context) error {
	if err := d.o.Cluster.WaitHTTP(ctx, readyURL, 3*time.Minute); err != nil {
		return fmt.Errorf("istiod not ready: %w; log tail:\n%s", err, d.o.Cluster.LogTail("istiod", 20))
	}
	return nil
}

// Stop ends istiod if it runs.
func (d *Istiod) Stop() {
	if d != nil && d.cmd != nil {
		d.o.Cluster.StopProcess(d.cmd, 15*time.Second)
		d.cmd = nil
	}
}

// Metrics returns istiod's Prometheus metrics as text.
func (d *Istiod) Metrics(ctx context.Context) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, metricsURL, nil)
	if err != nil {
		return "", err
	}
	resp, err := d.o.Cluster.HTTPClient(30 * time.Second).Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("istiod metrics: %s", resp.Status)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	return string(b), err
}
