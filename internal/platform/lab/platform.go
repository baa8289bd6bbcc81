package lab

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/meshbench/meshbench/internal/infra"
	"github.com/meshbench/meshbench/internal/platform"
	"github.com/meshbench/meshbench/internal/platform/lab/cluster"
	"github.com/meshbench/meshbench/internal/results/confined"
)

// Options configure the lab platform.
type Options struct {
	// Name and Prefix name the lab (see cluster.Config); defaults "mb".
	Name   string
	Prefix string
	// StateDir defaults to /run/meshbench/<Name>.
	StateDir string
	// Bin is the meshbench binary pods run; default $MESHBENCH_BIN, else
	// this executable.
	Bin string
	// LogDir, when set, is where the lab leaves every pod's log when it
	// goes down (see cluster.Config.KeepLogDir), for example in the results.
	LogDir confined.Dir
	// Supervisor marks this process as a detached lab supervisor.
	Supervisor bool
	Logger     *slog.Logger
}

// labPlatform is the lab platform. Methods are safe for concurrent use,
// though the runner calls them one at a time.
type labPlatform struct {
	o   Options
	mu  sync.Mutex
	lab *cluster.Lab
	wl  *workload // the deployed workload, nil before Deploy
	msh *labMesh  // the installed mesh, nil when none

	envoy envoyInfo
}

var _ platform.Platform = (*labPlatform)(nil)

// New returns the lab platform; nothing happens until Up.
func New(o Options) platform.Platform { return newPlatform(o) }

func newPlatform(o Options) *labPlatform {
	if o.Name == "" {
		o.Name = "mb"
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return &labPlatform{o: o}
}

// Bin returns the meshbench binary to run in pods.
func (o Options) bin() (string, error) {
	if o.Bin != "" {
		return o.Bin, nil
	}
	if b := os.Getenv("MESHBENCH_BIN"); b != "" {
		return b, nil
	}
	b, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("find the meshbench binary for pods (set MESHBENCH_BIN): %w", err)
	}
	return b, nil
}

// Info implements platform.Platform.
func (p *labPlatform) Info(ctx context.Context) (infra.Info, error) {
	in := infra.Info{Name: "lab", CPUs: runtime.NumCPU(), CgroupVersion: 1}
	in.Host, _ = os.Hostname()
	var u unix.Utsname
	if err := unix.Uname(&u); err == nil {
		in.Kernel = unix.ByteSliceToString(u.Release[:])
	}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				in.CPUModel = strings.TrimSpace(v)
				break
			}
		}
	}
	if _, err := os.Stat("/sys/fs/cgroup/cgroup.controllers"); err == nil {
		in.CgroupVersion = 2
		b, _ := os.ReadFile("/sys/fs/cgroup/cgroup.controllers")
		in.CanPinCPUs = strings.Contains(string(b), "cpuset")
	} else if _, err := os.Stat("/sys/fs/cgroup/cpuset/cpuset.cpus"); err == nil {
		in.CanPinCPUs = true
	}
	in.EnvoyVersion = p.envoy.get(ctx, p.o.Logger)
	if files, _, err := cluster.FileLimit(); err == nil {
		in.OpenFiles = files
	}
	return in, ctx.Err()
}

// Up implements platform.Platform: it brings a lab up with the spec's
// nodes, or checks that the one this platform brought up has them.
func (p *labPlatform) Up(ctx context.Context, spec infra.ClusterSpec) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.lab != nil {
		return sameNodes(p.lab.Nodes(), spec)
	}
	cfg := cluster.Config{Name: p.o.Name, Prefix: p.o.Prefix, StateDir: p.o.StateDir, KeepLogDir: p.o.LogDir,
		Logger: p.o.Logger, Supervisor: p.o.Supervisor}
	for _, n := range spec.Nodes {
		cfg.Nodes = append(cfg.Nodes, cluster.NodeConfig{Name: n.Name, Role: string(n.Role), CPUs: n.CPUs})
	}
	l, err := cluster.Up(ctx, cfg)
	if err != nil {
		return err
	}
	p.lab = l
	return nil
}

func sameNodes(have []cluster.Node, spec infra.ClusterSpec) error {
	if len(have) != len(spec.Nodes) {
		return fmt.Errorf("the lab is up with %d nodes, the study needs %d: bring it down first", len(have), len(spec.Nodes))
	}
	for i, n := range spec.Nodes {
		if have[i].Name != n.Name || have[i].Role != string(n.Role) || have[i].CPUs != n.CPUs {
			return fmt.Errorf("the lab is up with node %s (role %s), the study needs %s (role %s): bring it down first",
				have[i].Name, have[i].Role, n.Name, n.Role)
		}
	}
	return nil
}

// Down implements platform.Platform.
func (p *labPlatform) Down(ctx context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.lab == nil {
		return nil
	}
	var errs []error
	if p.msh != nil {
		errs = append(errs, p.msh.Remove(ctx))
		p.msh = nil
	}
	errs = append(errs, p.lab.Down(ctx))
	p.lab, p.wl = nil, nil
	return errors.Join(errs...)
}

// running returns the lab, or an error when Up has not run.
func (p *labPlatform) running() (*cluster.Lab, error) {
	if p.lab == nil {
		return nil, errors.New("the lab is not up: call Up first")
	}
	return p.lab, nil
}

// Contention implements platform.ContentionMeter: the share of the lab's
// CPUs the hypervisor takes when they sleep and wake as the lab's do.
func (p *labPlatform) Contention(ctx context.Context) (float64, error) {
	l, err := p.running()
	if err != nil {
		return 0, err
	}
	return l.Contention(ctx)
}
