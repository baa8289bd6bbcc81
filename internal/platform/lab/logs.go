package lab

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/meshbench/meshbench/internal/metrics"
	"github.com/meshbench/meshbench/internal/platform/lab/cluster"
	"github.com/meshbench/meshbench/internal/results/confined"
)

// generatorLogLimit bounds a generator's kept standard error: it says
// why a generator failed in its first lines, and a generator that keeps
// writing must not fill the results.
const generatorLogLimit = 1 << 20

// generatorLog is one generator's standard error, kept in a measurement's
// log directory after a line with its command. It never fails a write:
// a generator's result matters more than its log.
type generatorLog struct {
	path string
	// mu orders writes and close: a generator that did not stop in time
	// may still write after its measurement has given up on it.
	mu      sync.Mutex
	f       *os.File
	left    int64
	dropped int64
	err     error // the first failed write
}

// The log directory may be in a results directory from someone else:
// a link planted at the file's name, or swapped in for a directory on
// its way, is refused, not written through.
func openGeneratorLog(dir confined.Dir, namespace string, argv []string) (*generatorLog, error) {
	name := "load-" + namespace + ".log"
	path := filepath.Join(dir.Path(), name)
	f, err := dir.OpenFile(name, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, err
	}
	g := &generatorLog{path: path, f: f, left: generatorLogLimit}
	_, g.err = fmt.Fprintf(f, "# %s %s\n", time.Now().UTC().Format(time.RFC3339), strings.Join(argv, " "))
	return g, nil
}

func (g *generatorLog) Write(b []byte) (int, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	keep := min(int64(len(b)), g.left)
	if keep > 0 && g.err == nil {
		if _, err := g.f.Write(b[:keep]); err != nil {
			g.err = err
		}
	}
	g.left -= keep
	g.dropped += int64(len(b)) - keep
	return len(b), nil
}

// close notes what was left out and how the generator ended (code < 0:
// it did not end).
func (g *generatorLog) close(code int) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.left = 0 // later writes are dropped, not written to a closed file
	if g.dropped > 0 {
		fmt.Fprintf(g.f, "\n# %d more bytes left out\n", g.dropped)
	}
	if code >= 0 {
		fmt.Fprintf(g.f, "# exited %d\n", code)
	}
	if err := errors.Join(g.err, g.f.Close()); err != nil {
		return fmt.Errorf("generator log %s: %w", g.path, err)
	}
	return nil
}

// faults counts a container's restarts and failed exits.
func faults(c cluster.Container) int {
	n := c.Restarts
	if c.Exited && c.ExitCode != 0 {
		n++
	}
	return n
}

// faultCounts maps each container ("namespace/pod/container") to its
// faults.
func faultCounts(pods []cluster.Pod) map[string]int {
	out := map[string]int{}
	for _, p := range pods {
		for _, c := range p.Containers {
			out[p.Key()+"/"+c.Name] = faults(c)
		}
	}
	return out
}

// faultsSince names every container that restarted or failed since the
// counts in before were taken, a proxy's as "proxy restarted": the
// measurement did not run on the data plane as installed. A container
// that was not there before (a load generator) is not counted.
func faultsSince(pods []cluster.Pod, before map[string]int) []string {
	var out []string
	for _, pod := range pods {
		for _, c := range pod.Containers {
			was, ok := before[pod.Key()+"/"+c.Name]
			n := faults(c)
			if !ok || n <= was {
				continue
			}
			what := "container"
			switch c.Role {
			case metrics.RoleSidecar, metrics.RoleNodeProxy, metrics.RoleWaypoint, metrics.RoleIngress:
				what = "proxy"
			}
			how := "restarted"
			if c.Exited {
				how = fmt.Sprintf("exited %d", c.ExitCode)
			}
			out = append(out, fmt.Sprintf("%s %s: %s/%s (restarts and failed exits: %d before the measurement, %d after)", what, how, pod.Key(), c.Name, was, n))
		}
	}
	return out
}

// keepFaultyLogs copies into dir the log of every pod one of whose
// containers restarted or failed since the counts in before were taken:
// the measurement did not run on the workload as deployed.
func (p *labPlatform) keepFaultyLogs(l *cluster.Lab, before map[string]int, dir confined.Dir) {
	for _, pod := range l.Pods() {
		for _, c := range pod.Containers {
			if faults(c) <= before[pod.Key()+"/"+c.Name] {
				continue
			}
			if dst, err := l.KeepLog(pod.Namespace, pod.Name, dir); err != nil {
				p.o.Logger.Warn("keep the log of a pod that restarted", "pod", pod.Key(), "err", err)
			} else {
				p.o.Logger.Warn("a container restarted or failed during the measurement", "pod", pod.Key(),
					"container", c.Name, "restarts", c.Restarts, "log", dst)
			}
			break
		}
	}
}
