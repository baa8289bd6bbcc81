package localkube

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/meshbench/meshbench/internal/hostsafe"
)

// K8sVersion is the Kubernetes version scripts/k8s-testbin.sh builds; its
// cache directory is named after it.
const K8sVersion = "v1.34.4"

// BinDirEnv overrides where the control plane's binaries are looked for.
const BinDirEnv = "MESHBENCH_K8S_BIN"

// IstioModuleVersion is the istio.io/istio module version
// scripts/istiod-build.sh builds; its cache directory is named after it,
// and it is istiod's version in every result.
const IstioModuleVersion = "v0.0.0-20260827124520-eed52ebb66ad"

// IstiodDirEnv overrides where istiod's build is looked for.
const IstiodDirEnv = "MESHBENCH_ISTIOD_DIR"

// BinDir returns the cache directory scripts/k8s-testbin.sh builds into
// (holding bin/ and stages/), or $MESHBENCH_K8S_BIN.
func BinDir() string { return cacheDir(BinDirEnv, "k8s", K8sVersion) }

// IstiodDir returns the cache directory scripts/istiod-build.sh builds
// into (holding bin/pilot-discovery, crds.yaml and version), or
// $MESHBENCH_ISTIOD_DIR.
func IstiodDir() string { return cacheDir(IstiodDirEnv, "istiod", IstioModuleVersion) }

// cacheDir is the variable env's directory, or meshbench's cache
// directory for a build of name at version.
func cacheDir(env, name, version string) string {
	if d := os.Getenv(env); d != "" {
		return d
	}
	cache := os.Getenv("XDG_CACHE_HOME")
	if cache == "" {
		home, _ := os.UserHomeDir()
		cache = filepath.Join(home, ".cache")
	}
	return filepath.Join(cache, "meshbench", name, version)
}

// binaries are the control plane's programs in BinDir's bin/.
var binaries = []string{"etcd", "kube-apiserver", "kube-controller-manager", "kwok"}

// CheckBinaries reports, as one error naming the fix, which of the
// control plane's binaries and kwok's stage files are missing from dir,
// or could have been changed by another user: they run as root's
// children, from a cache or a directory an environment variable names.
func CheckBinaries(dir string) error {
	var missing []string
	for _, b := range binaries {
		if st, err := os.Stat(filepath.Join(dir, "bin", b)); err != nil || st.Mode()&0o111 == 0 {
			missing = append(missing, b)
		}
	}
	if st, _ := filepath.Glob(filepath.Join(dir, "stages", "*.yaml")); len(st) == 0 {
		missing = append(missing, "kwok stages")
	}
	if len(missing) > 0 {
		return fmt.Errorf("local Kubernetes control plane: %s missing in %s; build it with scripts/k8s-testbin.sh (or set %s)",
			strings.Join(missing, ", "), dir, BinDirEnv)
	}
	var errs []error
	for _, b := range binaries {
		if _, err := hostsafe.Executable(filepath.Join(dir, "bin", b)); err != nil {
			errs = append(errs, err)
		}
	}
	if err := hostsafe.Dir(filepath.Join(dir, "stages")); err != nil {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("local Kubernetes control plane in %s: %w; %s", dir, err, hostsafe.Fix)
	}
	return nil
}

// UID is the user (and group) every process of the local control plane
// runs as, with no capability: none needs any, and a process left as root
// with no capability could still write every file root owns. The
// cluster's directory is root's and its group's (0750); what the
// processes read and write in it is the user's.
const UID = 65533

// Cluster is a running local control plane.
type Cluster struct {
	Dir        string // its working directory: data, logs, certificates
	Kubeconfig string // an admin kubeconfig, for processes in the namespace
	Netns      *Netns
	Client     kubernetes.Interface
	Config     *rest.Config // dials through the namespace
	procs      []*exec.Cmd
	log        *slog.Logger
}

// Options configure Start.
type Options struct {
	BinDir string // see BinDir
	// Dir is the working directory, which the caller made (and, to find
	// it after a kill, recorded) and Stop removes.
	Dir string
	// EtcdQuota bounds etcd's database (--quota-backend-bytes); 0 is
	// DefaultEtcdQuota. EtcdDiskBound is what its data directory takes.
	EtcdQuota int64
	Log       *slog.Logger
}

// DefaultEtcdQuota is etcd's database bound for the control-plane study,
// whose 5,000 pods and their churn need room (its working directory is on
// disk, not /run).
const DefaultEtcdQuota = 8 << 30

// etcdMaxWALs is how many write-ahead log files etcd keeps once it
// snapshots (every 10,000 writes).
const etcdMaxWALs = 2

// etcdWALSegment is the size etcd preallocates each write-ahead log file
// to (wal.SegmentSizeBytes: 64 MB, not MiB). Beside the files it keeps it
// always holds one more, preallocated, for the next segment (0.tmp).
const etcdWALSegment = 64 * 1000 * 1000

// etcdDBSlack is how far etcd's database file may pass its quota: the
// request that crossed it is admitted (etcd's largest is 1.5 MiB), and
// bbolt grows its file 16 MiB at a time once it holds more than that.
const etcdDBSlack = 16<<20 + 3<<19

// EtcdDiskBound is at most what etcd's data directory takes with quota
// (0: DefaultEtcdQuota): the database past its quota by etcdDBSlack, and
// the write-ahead log files it keeps with the one it preallocates. Doctor
// asks for it beside the lab's own.
func EtcdDiskBound(quota int64) int64 {
	if quota == 0 {
		quota = DefaultEtcdQuota
	}
	return quota + etcdDBSlack + (etcdMaxWALs+1)*etcdWALSegment
}

// etcdArgs is etcd's command line with its data in dataDir and its
// database bounded by quota (0: DefaultEtcdQuota). The API server
// compacts every 5 minutes, so the database does not grow with revisions.
func etcdArgs(dataDir string, quota int64) []string {
	if quota == 0 {
		quota = DefaultEtcdQuota
	}
	return []string{"--data-dir", dataDir,
		"--listen-client-urls", "http://127.0.0.1:2379", "--advertise-client-urls", "http://127.0.0.1:2379",
		"--listen-peer-urls", "http://127.0.0.1:2380", "--initial-advertise-peer-urls", "http://127.0.0.1:2380",
		"--initial-cluster", "default=http://127.0.0.1:2380", "--unsafe-no-fsync", "--log-level", "warn",
		"--quota-backend-bytes", strconv.FormatInt(quota, 10), "--max-wals", strconv.Itoa(etcdMaxWALs)}
}

// Start creates the namespace and starts etcd, kube-apiserver,
// kube-controller-manager and kwok in it. The caller must Stop it, also
// after an error.
func Start(ctx context.Context, o Options) (*Cluster, error) {
	if err := CheckBinaries(o.BinDir); err != nil {
		return nil, err
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.Dir == "" {
		return nil, errors.New("local Kubernetes control plane: no working directory")
	}
	ns, err := NewNetns()
	if err != nil {
		return nil, err
	}
	c := &Cluster{Dir: o.Dir, Kubeconfig: filepath.Join(o.Dir, "kubeconfig"), Netns: ns, log: o.Log}
	return c, c.start(ctx, o)
}

// prepare makes the cluster's directory root's and UID's group's alone
// (0750), with the data directory and home UID's, and copies kwok's stage
// files in from binDir, which UID may not be able to reach (a cache under
// /root).
func (c *Cluster) prepare(binDir string) error {
	if err := os.Chown(c.Dir, 0, UID); err != nil {
		return err
	}
	if err := os.Chmod(c.Dir, 0o750); err != nil {
		return err
	}
	for _, d := range []string{filepath.Join(c.Dir, "etcd"), c.Home()} {
		if err := c.userDir(d); err != nil {
			return err
		}
	}
	stages, err := filepath.Glob(filepath.Join(binDir, "stages", "*.yaml"))
	if err != nil {
		return err
	}
	if err := os.Mkdir(filepath.Join(c.Dir, "stages"), 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return err
	}
	for _, st := range stages {
		b, err := os.ReadFile(st)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(c.Dir, "stages", filepath.Base(st)), b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// Home is the control plane's processes' working directory, the one
// directory in the cluster's they may create files in.
func (c *Cluster) Home() string { return filepath.Join(c.Dir, "home") }

// userDir creates a directory of UID's alone (0700), if missing.
func (c *Cluster) userDir(d string) error {
	if err := os.Mkdir(d, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return err
	}
	return os.Chown(d, UID, UID)
}

// own gives files to UID, for its processes to read (0600 stays).
func (c *Cluster) own(paths ...string) error {
	for _, p := range paths {
		if err := os.Chown(p, UID, UID); err != nil {
			return err
		}
	}
	return nil
}

// UserFile creates (empty, if missing) a file in the cluster's directory
// that the control plane's user may write, such as a log a process opens
// by name, and Home, and returns the file's path.
func (c *Cluster) UserFile(name string) (string, error) {
	if err := c.userDir(c.Home()); err != nil {
		return "", err
	}
	p := filepath.Join(c.Dir, name)
	f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return "", err
	}
	f.Close()
	return p, c.own(p)
}

func (c *Cluster) start(ctx context.Context, o Options) error {
	root := o.BinDir
	if err := c.prepare(root); err != nil {
		return err
	}
	p, err := writePKI(c.Dir)
	if err != nil {
		return err
	}
	if err := writeKubeconfig(c.Kubeconfig, p); err != nil {
		return err
	}
	if err := c.own(p.CA, p.ServerCert, p.ServerKey, p.AdminCert, p.AdminKey, p.SAKey, p.SAPub, c.Kubeconfig); err != nil {
		return err
	}
	bin := func(name string) string { return filepath.Join(root, "bin", name) }
	if _, err := c.StartProcess("etcd", bin("etcd"), nil, etcdArgs(filepath.Join(c.Dir, "etcd"), o.EtcdQuota)...); err != nil {
		return err
	}
	if err := c.waitHTTP(ctx, "http://127.0.0.1:2379/health", 30*time.Second); err != nil {
		return c.failed("etcd", err)
	}
	if _, err := c.StartProcess("kube-apiserver", bin("kube-apiserver"), nil,
		"--etcd-servers", "http://127.0.0.1:2379", "--secure-port", "6443", "--bind-address", "127.0.0.1",
		"--advertise-address", "127.0.0.1", "--tls-cert-file", p.ServerCert, "--tls-private-key-file", p.ServerKey,
		"--client-ca-file", p.CA, "--service-account-issuer", "https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file", p.SAPub, "--service-account-signing-key-file", p.SAKey,
		"--service-cluster-ip-range", "10.96.0.0/16", "--authorization-mode", "RBAC",
		// The study writes thousands of objects in bursts.
		"--max-requests-inflight", "2000", "--max-mutating-requests-inflight", "1000"); err != nil {
		return err
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", c.Kubeconfig)
	if err != nil {
		return err
	}
	cfg.Dial = c.Netns.DialContext
	cfg.QPS, cfg.Burst = 500, 1000
	c.Config = cfg
	if c.Client, err = kubernetes.NewForConfig(cfg); err != nil {
		return err
	}
	rctx, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	err = wait.PollUntilContextCancel(rctx, 300*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		_, err := c.Client.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		return err == nil, nil
	})
	if err != nil {
		return c.failed("kube-apiserver", err)
	}
	// Only the controllers the study needs: EndpointSlices for Services,
	// ServiceAccounts for pod admission, namespace deletion and garbage
	// collection.
	if _, err := c.StartProcess("kube-controller-manager", bin("kube-controller-manager"), nil, "--kubeconfig", c.Kubeconfig,
		"--leader-elect=false", "--root-ca-file", p.CA, "--service-account-private-key-file", p.SAKey,
		"--bind-address", "127.0.0.1", "--controllers", "endpointslice,serviceaccount,namespace,garbagecollector",
		"--kube-api-qps", "500", "--kube-api-burst", "1000", "--concurrent-service-endpoint-syncs", "10"); err != nil {
		return err
	}
	stages, err := filepath.Glob(filepath.Join(c.Dir, "stages", "*.yaml"))
	if err != nil || len(stages) == 0 {
		return fmt.Errorf("kwok stages missing in %s", root)
	}
	args := []string{"--kubeconfig", c.Kubeconfig, "--manage-all-nodes=false",
		"--manage-nodes-with-annotation-selector", "kwok.x-k8s.io/node=fake", "--node-lease-duration-seconds", "40",
		"--node-ip", "127.0.0.1"}
	for _, s := range stages {
		args = append(args, "--config", s)
	}
	if _, err := c.StartProcess("kwok", bin("kwok"), nil, args...); err != nil {
		return err
	}
	return wait.PollUntilContextCancel(rctx, 300*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		_, err := c.Client.CoreV1().ServiceAccounts("default").Get(ctx, "default", metav1.GetOptions{})
		return err == nil, nil
	})
}

// StartProcess runs a process in the namespace as UID with no
// capability, in Home, its output to <Dir>/<name>.log, and stops it with
// the cluster. env, when not nil, replaces the environment. The program is
// opened here, as root, and run from that descriptor: it may sit where UID
// cannot reach (a cache under /root), and CheckBinaries has checked it.
func (c *Cluster) StartProcess(name, path string, env []string, args ...string) (*exec.Cmd, error) {
	if err := c.userDir(c.Home()); err != nil {
		return nil, err
	}
	logf, err := os.OpenFile(filepath.Join(c.Dir, name+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	prog, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	defer prog.Close()
	cmd := &exec.Cmd{Path: "/proc/self/fd/3", Args: append([]string{name}, args...), ExtraFiles: []*os.File{prog}}
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.Env = env
	cmd.Dir = c.Home()
	// Switching from root to UID clears every capability; Go sets the
	// parent-death signal after it switches, so it holds.
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: UID, Gid: UID, Groups: []uint32{}}}
	if err := c.Netns.Start(cmd); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	c.procs = append(c.procs, cmd)
	c.log.Debug("started", "process", name, "pid", cmd.Process.Pid)
	return cmd, nil
}

// LauncherCaps are the capabilities a launcher of its own that runs as
// root (the lab's container for istiod) needs to start UserCommand: join
// the namespace (sys_admin, and sys_ptrace to open it from a thread of
// meshbench's), then become UID (setuid, setgid) and empty the bounding
// set (setpcap).
var LauncherCaps = []string{"sys_admin", "sys_ptrace", "setuid", "setgid", "setpcap"}

// UserCommand is a command line that, started as root with LauncherCaps,
// runs bin with args in the cluster's namespace as StartProcess runs its
// processes: as UID with no capability, in Home, with env as its whole
// environment. bin is opened as root first, as StartProcess opens it. The
// namespace must stay open while it runs.
func (c *Cluster) UserCommand(bin string, env []string, args ...string) []string {
	uid := strconv.Itoa(UID)
	argv := []string{"/bin/sh", "-c", `exec 3<"$0" && exec "$@"`, bin,
		"nsenter", "--net=" + c.Netns.Path(), "--",
		// The kernel clears the parent-death signal when the user
		// changes; setpriv sets it again.
		"setpriv", "--reuid=" + uid, "--regid=" + uid, "--clear-groups", "--inh-caps=-all", "--bounding-set=-all", "--pdeathsig=KILL", "--",
		"env", "-i", "-C", c.Home()}
	argv = append(argv, env...)
	return append(append(argv, "/proc/self/fd/3"), args...)
}

// StopProcess ends one process the cluster started: SIGTERM, then SIGKILL
// after grace.
func (c *Cluster) StopProcess(cmd *exec.Cmd, grace time.Duration) {
	for i, p := range c.procs {
		if p == cmd {
			c.procs = append(c.procs[:i], c.procs[i+1:]...)
			break
		}
	}
	stop(cmd, grace)
}

func stop(cmd *exec.Cmd, grace time.Duration) {
	p := cmd.Process
	_ = p.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(grace):
		_ = p.Kill()
		<-done
	}
}

// Stop ends every process, newest first, closes the namespace and removes
// the working directory unless keep.
func (c *Cluster) Stop(keep bool) {
	for i := len(c.procs) - 1; i >= 0; i-- {
		stop(c.procs[i], 10*time.Second)
	}
	c.procs = nil
	c.Netns.Close()
	if !keep {
		_ = os.RemoveAll(c.Dir)
	}
}

// maxLogTail bounds what LogTail reads: a log may be the control plane
// user's file, as large as it made it.
const maxLogTail = 64 << 10

// LogTail returns the last lines of a process's log, from its last
// maxLogTail bytes.
func (c *Cluster) LogTail(name string, lines int) string {
	var b []byte
	if f, err := os.Open(filepath.Join(c.Dir, name+".log")); err == nil {
		if st, err := f.Stat(); err == nil {
			b = make([]byte, min(st.Size(), maxLogTail))
			n, _ := f.ReadAt(b, st.Size()-int64(len(b)))
			b = b[:n]
		}
		f.Close()
	}
	ls := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(ls) > lines {
		ls = ls[len(ls)-lines:]
	}
	return strings.Join(ls, "\n")
}

func (c *Cluster) failed(name string, err error) error {
	return fmt.Errorf("%s: %w; log tail:\n%s", name, err, c.LogTail(name, 15))
}

// HTTPClient returns a client that dials through the namespace.
func (c *Cluster) HTTPClient(timeout time.Duration) *http.Client {
	return &http.Client{Timeout: timeout, Transport: &http.Transport{DialContext: c.Netns.DialContext, DisableKeepAlives: true}}
}

func (c *Cluster) waitHTTP(ctx context.Context, url string, timeout time.Duration) error {
	hc := c.HTTPClient(2 * time.Second)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if resp, err := hc.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return errors.New("not healthy after " + timeout.String())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// WaitHTTP polls url from inside the namespace until it answers 200.
func (c *Cluster) WaitHTTP(ctx context.Context, url string, timeout time.Duration) error {
	return c.waitHTTP(ctx, url, timeout)
}

// AddNodes creates n fake nodes managed by kwok, named prefix-<i>, each
// with its own /24 pod CIDR (so at most 250 pods a node), and waits until
// they are Ready.
func (c *Cluster) AddNodes(ctx context.Context, prefix string, from, n int) error {
	for i := from; i < from+n; i++ {
		name := fmt.Sprintf("%s-%d", prefix, i)
		cidr := fmt.Sprintf("10.%d.%d.0/24", 64+i/256, i%256)
		node := &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{
				Name: name,
				Labels: map[string]string{"kubernetes.io/hostname": name, "type": "kwok",
					"kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64"},
				Annotations: map[string]string{"kwok.x-k8s.io/node": "fake"},
			},
			Spec: corev1.NodeSpec{PodCIDR: cidr, PodCIDRs: []string{cidr}},
		}
		if _, err := c.Client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("create node %s: %w", name, err)
		}
	}
	wctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	err := wait.PollUntilContextCancel(wctx, 300*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		for i := from; i < from+n; i++ {
			node, err := c.Client.CoreV1().Nodes().Get(ctx, fmt.Sprintf("%s-%d", prefix, i), metav1.GetOptions{})
			if err != nil || !nodeReady(node) {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		return c.failed("kwok", fmt.Errorf("nodes not Ready: %w", err))
	}
	return nil
}

func nodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
