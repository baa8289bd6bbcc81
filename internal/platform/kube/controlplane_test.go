package kube

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/meshbench/meshbench/internal/load"

	"github.com/meshbench/meshbench/internal/testenv"
)

// testCluster is a real API server, etcd, controller-manager, scheduler
// and kwok (simulated nodes and pods) on loopback inside the test's
// network namespace, shared by the integration tests.
type testCluster struct {
	Dir        string
	Kubeconfig string
	Charts     string // Istio's chart directory
	Client     kubernetes.Interface
	// GeneratorResult is what every simulated generator in logNamespaces
	// reports through its log.
	GeneratorResult *load.Result
	procs           []*exec.Cmd
}

var (
	clusterOnce sync.Once
	cluster     *testCluster
	clusterErr  error
)

// Fake nodes, one per role; the load node is tainted, so that placement
// must tolerate it.
var testNodes = []struct {
	Name   string
	Role   string
	Taints []corev1.Taint
}{
	{Name: "mb-app-1", Role: "app"},
	{Name: "mb-load-1", Role: "load", Taints: []corev1.Taint{{Key: "meshbench.io/dedicated", Value: "load", Effect: corev1.TaintEffectNoSchedule}}},
	{Name: "mb-mesh-1", Role: "mesh"},
}

// needCluster returns the shared cluster, starting it on first use, or
// skips the test when the binaries could not be built or the namespace is
// missing.
func needCluster(t *testing.T) *testCluster {
	t.Helper()
	testenv.Integration(t)
	why := os.Getenv(envNoReason)
	testenv.Need(t, why == "", "the local control plane (scripts/k8s-testbin.sh builds it; root enters its network namespace): %s", why)
	testenv.Need(t, os.Getenv(envInNetns) != "", "the test's own network namespace, which TestMain enters when -run selects integration tests")
	clusterOnce.Do(func() { cluster, clusterErr = startCluster() })
	if clusterErr != nil {
		t.Fatalf("start control plane: %v", clusterErr)
	}
	return cluster
}

// istioCharts is the directory of Istio's charts in the module cache,
// which scripts/k8s-testbin.sh fetched and named in its cache directory.
func istioCharts() (string, error) {
	b, err := os.ReadFile(filepath.Join(os.Getenv(envBinDir), "charts"))
	if err != nil {
		return "", fmt.Errorf("istio charts: %w", err)
	}
	return strings.TrimSpace(string(b)), nil
}

func startCluster() (*testCluster, error) {
	if err := checkIsolated(); err != nil {
		return nil, err
	}
	root := os.Getenv(envBinDir)
	charts, err := istioCharts()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "meshbench-kube-it-")
	if err != nil {
		return nil, err
	}
	c := &testCluster{Dir: dir, Kubeconfig: filepath.Join(dir, "kubeconfig"), Charts: charts}
	cluster = c // so that stopCluster cleans up after a failed start
	pki, err := writePKI(dir)
	if err != nil {
		return nil, err
	}
	if err := writeKubeconfig(c.Kubeconfig, pki); err != nil {
		return nil, err
	}
	bin := func(name string) string { return filepath.Join(root, "bin", name) }
	if err := c.start("etcd", bin("etcd"), "--data-dir", filepath.Join(dir, "etcd"),
		"--listen-client-urls", "http://127.0.0.1:2379", "--advertise-client-urls", "http://127.0.0.1:2379",
		"--listen-peer-urls", "http://127.0.0.1:2380", "--initial-advertise-peer-urls", "http://127.0.0.1:2380",
		"--initial-cluster", "default=http://127.0.0.1:2380", "--unsafe-no-fsync", "--log-level", "warn"); err != nil {
		return nil, err
	}
	if err := waitHTTP("http://127.0.0.1:2379/health", 30*time.Second); err != nil {
		return nil, c.failed("etcd", err)
	}
	if err := c.start("kube-apiserver", bin("kube-apiserver"),
		"--etcd-servers", "http://127.0.0.1:2379", "--secure-port", "6443", "--bind-address", "127.0.0.1",
		"--advertise-address", "127.0.0.1", "--tls-cert-file", pki.ServerCert, "--tls-private-key-file", pki.ServerKey,
		"--client-ca-file", pki.CA, "--service-account-issuer", "https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file", pki.SAPub, "--service-account-signing-key-file", pki.SAKey,
		"--service-cluster-ip-range", "10.96.0.0/16", "--authorization-mode", "RBAC", "--allow-privileged"); err != nil {
		return nil, err
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", c.Kubeconfig)
	if err != nil {
		return nil, err
	}
	if c.Client, err = kubernetes.NewForConfig(cfg); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	err = wait.PollUntilContextCancel(ctx, 500*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		_, err := c.Client.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		return err == nil, nil
	})
	if err != nil {
		return nil, c.failed("kube-apiserver", err)
	}
	if err := c.start("kube-controller-manager", bin("kube-controller-manager"), "--kubeconfig", c.Kubeconfig,
		"--leader-elect=false", "--root-ca-file", pki.CA, "--service-account-private-key-file", pki.SAKey,
		"--bind-address", "127.0.0.1", "--controllers", "*,-nodeipam,-cloud-node-lifecycle"); err != nil {
		return nil, err
	}
	if err := c.start("kube-scheduler", bin("kube-scheduler"), "--kubeconfig", c.Kubeconfig,
		"--leader-elect=false", "--bind-address", "127.0.0.1"); err != nil {
		return nil, err
	}
	stages, err := filepath.Glob(filepath.Join(root, "stages", "*.yaml"))
	if err != nil || len(stages) == 0 {
		return nil, fmt.Errorf("kwok stages missing in %s", root)
	}
	logsConfig, err := c.writeGeneratorLogs()
	if err != nil {
		return nil, err
	}
	// kwok also stands in for the kubelets' API, on the nodes' address
	// (loopback), so that the API server can read pod logs from it.
	kwokArgs := []string{"--kubeconfig", c.Kubeconfig, "--manage-all-nodes=false",
		"--manage-nodes-with-annotation-selector", "kwok.x-k8s.io/node=fake", "--node-lease-duration-seconds", "40",
		"--node-ip", "127.0.0.1", "--node-port", "10250", "--server-address", "127.0.0.1:10250",
		"--tls-cert-file", pki.ServerCert, "--tls-private-key-file", pki.ServerKey, "--config", logsConfig}
	for _, s := range stages {
		kwokArgs = append(kwokArgs, "--config", s)
	}
	if err := c.start("kwok", bin("kwok"), kwokArgs...); err != nil {
		return nil, err
	}
	if err := c.addNodes(ctx); err != nil {
		return nil, c.failed("kwok", err)
	}
	// Every platform the tests make acts as the runner user, bound only
	// to the role `meshbench kubernetes rbac` prints, so that a verb the
	// platform uses and the role lacks fails the suite.
	if err := bindRunner(ctx, c); err != nil {
		return nil, fmt.Errorf("bind the runner user: %w", err)
	}
	// Let the controllers publish what they publish at start (root CA
	// ConfigMaps, default ServiceAccounts), so that snapshots taken from
	// here on see only what tests do.
	err = wait.PollUntilContextCancel(ctx, 500*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		for _, ns := range []string{"default", "kube-system", "kube-public", "kube-node-lease"} {
			if _, err := c.Client.CoreV1().ConfigMaps(ns).Get(ctx, "kube-root-ca.crt", metav1.GetOptions{}); err != nil {
				return false, nil
			}
			if _, err := c.Client.CoreV1().ServiceAccounts(ns).Get(ctx, "default", metav1.GetOptions{}); err != nil {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		return nil, c.failed("kube-controller-manager", err)
	}
	return c, nil
}

// start runs one control-plane process, its output to a log file.
func (c *testCluster) start(name, path string, args ...string) error {
	logf, err := os.Create(filepath.Join(c.Dir, name+".log"))
	if err != nil {
		return err
	}
	cmd := exec.Command(path, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	// Die with the test binary, even if it is killed before clean-up.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return fmt.Errorf("start %s: %w", name, err)
	}
	logf.Close()
	c.procs = append(c.procs, cmd)
	return nil
}

// failed adds the tail of a component's log to an error.
func (c *testCluster) failed(name string, err error) error {
	b, _ := os.ReadFile(filepath.Join(c.Dir, name+".log"))
	return fmt.Errorf("%s: %w; log tail:\n%s", name, err, tail(b, 15))
}

// addNodes creates the fake nodes and waits for kwok to make them Ready.
func (c *testCluster) addNodes(ctx context.Context) error {
	for _, n := range testNodes {
		node := &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{
				Name: n.Name,
				// The labels a kubelet sets, which charts' node selectors use.
				Labels: map[string]string{labelRole: n.Role, "kubernetes.io/hostname": n.Name, "type": "kwok",
					"kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64"},
				Annotations: map[string]string{"kwok.x-k8s.io/node": "fake"},
			},
			Spec: corev1.NodeSpec{Taints: n.Taints},
		}
		if _, err := c.Client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("create node %s: %w", n.Name, err)
		}
	}
	return wait.PollUntilContextCancel(ctx, 500*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		for _, n := range testNodes {
			node, err := c.Client.CoreV1().Nodes().Get(ctx, n.Name, metav1.GetOptions{})
			if err != nil || !usable(*node) {
				return false, nil
			}
		}
		return true, nil
	})
}

// stopCluster ends every control-plane process by PID, newest first, and
// removes the cluster's files.
func stopCluster() {
	c := cluster
	if c == nil {
		return
	}
	for i := len(c.procs) - 1; i >= 0; i-- {
		p := c.procs[i].Process
		_ = p.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _, _ = p.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = p.Kill()
			<-done
		}
	}
	if os.Getenv("MESHBENCH_KUBE_IT_KEEP") == "" {
		_ = os.RemoveAll(c.Dir)
	}
	cluster = nil
}

func waitHTTP(url string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		resp, err := http.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	return errors.New("not healthy after " + timeout.String())
}

func writeKubeconfig(path string, pki testPKI) error {
	cfg := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: it
  cluster: {server: "https://127.0.0.1:6443", certificate-authority: %q}
users:
- name: admin
  user: {client-certificate: %q, client-key: %q}
- name: nobody
  user: {client-certificate: %q, client-key: %q}
- name: runner
  user: {client-certificate: %q, client-key: %q}
- name: small
  user: {client-certificate: %q, client-key: %q}
- name: tenant
  user: {client-certificate: %q, client-key: %q}
contexts:
- name: it
  context: {cluster: it, user: admin}
- name: nobody
  context: {cluster: it, user: nobody}
- name: runner
  context: {cluster: it, user: runner}
- name: small
  context: {cluster: it, user: small}
- name: tenant
  context: {cluster: it, user: tenant}
current-context: it
`, pki.CA, pki.AdminCert, pki.AdminKey, pki.NobodyCert, pki.NobodyKey, pki.RunnerCert, pki.RunnerKey,
		pki.SmallCert, pki.SmallKey, pki.TenantCert, pki.TenantKey)
	return os.WriteFile(path, []byte(cfg), 0o600)
}
