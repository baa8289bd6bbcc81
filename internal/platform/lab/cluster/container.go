package cluster

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// container supervises one process: it starts it in the pod's network
// namespace and its own cgroup, restarts it by its restart policy with
// exponential back-off, and stops it.
type container struct {
	lab   *Lab
	pod   *pod
	spec  ContainerSpec
	rel   string   // cgroup directory below the lab's top
	procs []string // cgroup.procs files the process joins

	stopOnce sync.Once
	stopc    chan struct{} // closed: stop for good
	grace    time.Duration // set before stopc closes
	restartc chan struct{} // restart now
	done     chan struct{} // closed when the supervisor has returned

	// Under Lab.mu.
	pid      int
	running  bool
	ready    bool
	restarts int
	exitCode int
	exited   bool
}

func (c *container) viewLocked() Container {
	return Container{Name: c.spec.Name, Role: c.spec.Role, Resources: c.spec.Resources, Restart: c.spec.Restart,
		Cgroup: c.rel, PID: c.pid, Running: c.running, Ready: c.ready, Restarts: c.restarts,
		ExitCode: c.exitCode, Exited: c.exited}
}

// Back-off between restarts, reset after a run this long.
const (
	minBackoff   = 100 * time.Millisecond
	maxBackoff   = 5 * time.Second
	backoffReset = 10 * time.Second
)

// shimScript moves the shell into the container's cgroups before it
// execs the command, so that every page and CPU cycle of the command is
// charged to the container from its first instruction (a v1 cgroup does
// not move charges made before a process joins it). It sets the
// container's open-file limit, soft and hard, while it is still root.
const shimScript = `for f in $MB_CGROUP_PROCS; do echo $$ > "$f" || exit 126; done; ulimit -n "$MB_NOFILE" || exit 126; unset MB_CGROUP_PROCS MB_NOFILE; exec "$@"`

// startContainer creates the container's cgroup and starts supervising it;
// it returns the first start's error.
func (l *Lab) startContainer(p *pod, cs ContainerSpec) error {
	rel := containerCgroup(p.node.Name, p.spec.Namespace, p.spec.Name, cs.Name)
	procs, err := l.cg.setupContainer(rel, cs.Resources)
	if err != nil {
		return fmt.Errorf("pod %s container %s: %w", p.key(), cs.Name, err)
	}
	if cs.Restart == "" {
		cs.Restart = RestartAlways
	}
	c := &container{lab: l, pod: p, spec: cs, rel: rel, procs: procs,
		stopc: make(chan struct{}), restartc: make(chan struct{}, 1), done: make(chan struct{})}
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return errors.New("lab is down")
	}
	p.containers = append(p.containers, c)
	l.changedLocked()
	l.wg.Add(1)
	l.mu.Unlock()
	first := make(chan error, 1)
	go c.supervise(first)
	if cs.Readiness != nil {
		l.wg.Add(1)
		go c.probe()
	}
	if err := <-first; err != nil {
		return fmt.Errorf("pod %s container %s: %w", p.key(), cs.Name, err)
	}
	return nil
}

func (c *container) supervise(first chan<- error) {
	defer c.lab.wg.Done()
	defer close(c.done)
	backoff := minBackoff
	for {
		began := time.Now()
		code, stopped := c.runOnce(first)
		first = nil
		if stopped {
			return
		}
		if c.spec.Restart == RestartNever || c.spec.Restart == RestartOnFailure && code == 0 {
			c.lab.mu.Lock()
			c.exited = true
			c.lab.changedLocked()
			c.lab.mu.Unlock()
			return
		}
		if time.Since(began) > backoffReset {
			backoff = minBackoff
		}
		select {
		case <-c.stopc:
			return
		case <-c.restartc:
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, maxBackoff)
		c.lab.mu.Lock()
		c.restarts++
		c.lab.mu.Unlock()
	}
}

// runOnce runs the process until it exits, returning its exit code, or
// until the container is stopped (stopped is then true).
func (c *container) runOnce(first chan<- error) (code int, stopped bool) {
	cmd, err := c.start()
	if first != nil {
		first <- err
	}
	if err != nil {
		c.logf("start failed: %v", err)
		return -1, false
	}
	c.lab.mu.Lock()
	c.pid, c.running = cmd.Process.Pid, true
	c.ready = c.spec.Readiness == nil
	c.lab.changedLocked()
	c.lab.mu.Unlock()
	c.logf("started, pid %d", cmd.Process.Pid)
	waitc := make(chan error, 1)
	go func() { waitc <- cmd.Wait() }()
	select {
	case err = <-waitc:
	case <-c.stopc:
		err = c.terminate(cmd, waitc, c.grace)
		stopped = true
	case <-c.restartc:
		err = c.terminate(cmd, waitc, deleteGrace)
	}
	code = exitCode(err)
	c.lab.mu.Lock()
	c.pid, c.running, c.ready, c.exitCode = 0, false, false, code
	c.lab.changedLocked()
	c.lab.mu.Unlock()
	c.logf("exited: %v", err)
	return code, stopped
}

func (c *container) start() (*exec.Cmd, error) {
	argv, exe, err := c.spec.privilegeArgv()
	if err != nil {
		return nil, err
	}
	if exe != nil {
		defer exe.Close()
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	p := c.pod
	cmd.Env = append([]string{
		"PATH=" + os.Getenv("PATH"),
		"MB_CGROUP_PROCS=" + strings.Join(c.procs, " "),
		"MB_NOFILE=" + strconv.FormatUint(c.lab.files, 10),
		// The downward API's usual variables.
		"POD_NAME=" + p.spec.Name, "POD_NAMESPACE=" + p.spec.Namespace, "POD_IP=" + p.ip.String(),
		"NODE_NAME=" + p.node.Name, "SERVICE_ACCOUNT=" + p.spec.ServiceAccount,
	}, c.spec.Env...)
	cmd.Stdout, cmd.Stderr = p.log, p.log
	if c.spec.Stdout != nil {
		cmd.Stdout = c.spec.Stdout
	}
	if c.spec.Stderr != nil {
		cmd.Stderr = c.spec.Stderr
	}
	if exe != nil {
		cmd.ExtraFiles = []*os.File{exe}
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := startIn(p.netns, cmd); err != nil {
		return nil, err
	}
	return cmd, nil
}

// terminate sends SIGTERM, then after grace SIGKILL to every process left
// in the container's cgroup, and waits for the main process.
func (c *container) terminate(cmd *exec.Cmd, waitc <-chan error, grace time.Duration) error {
	if grace > 0 {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case err := <-waitc:
			c.killCgroup()
			return err
		case <-time.After(grace):
		}
	}
	_ = cmd.Process.Kill()
	c.killCgroup()
	return <-waitc
}

func (c *container) killCgroup() { c.lab.cg.kill(c.rel) }

// stop ends the container for good; a zero grace kills at once.
func (c *container) stop(grace time.Duration) {
	c.stopOnce.Do(func() {
		c.grace = grace
		close(c.stopc)
	})
}

func (c *container) kill() { c.stop(0) }

func (c *container) logf(format string, args ...any) {
	if c.pod.log != nil {
		fmt.Fprintf(c.pod.log, "%s meshbench-lab: container %s: %s\n", time.Now().Format(time.RFC3339Nano), c.spec.Name, fmt.Sprintf(format, args...))
	}
}

// exitCode turns Wait's error into an exit code, -1 for a signal.
func exitCode(err error) int {
	if err == nil {
		return 0
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	return -1
}
