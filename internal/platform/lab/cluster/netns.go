package cluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// netnsDir is where named network namespaces are bind-mounted, as
// iproute2 does, so `ip netns exec` works on the lab's namespaces too.
const netnsDir = "/run/netns"

// inNetns runs fn on an OS thread that has entered the named namespace
// (the caller's own when name is empty). Sockets fn creates and processes
// it forks stay in that namespace.
func inNetns(name string, fn func() error) error {
	if name == "" {
		return fn()
	}
	target, err := netns.GetFromName(name)
	if err != nil {
		return fmt.Errorf("open network namespace %s: %w", name, err)
	}
	defer target.Close()
	return onOwnThread(name, func() error {
		if err := netns.Set(target); err != nil {
			return fmt.Errorf("enter network namespace %s: %w", name, err)
		}
		return fn()
	})
}

// onOwnThread runs fn, which may switch its thread's network namespace,
// on a locked OS thread, and puts the thread back in its original
// namespace afterwards. When it cannot go back, the thread is left locked
// so that the runtime discards it rather than reuse a thread in the wrong
// namespace.
func onOwnThread(name string, fn func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		orig, err := netns.Get()
		if err != nil {
			runtime.UnlockOSThread()
			errc <- fmt.Errorf("open current network namespace: %w", err)
			return
		}
		defer orig.Close()
		ferr := fn()
		if err := netns.Set(orig); err != nil {
			errc <- errors.Join(ferr, fmt.Errorf("leave network namespace %s: %w", name, err))
			return // the thread stays locked and dies with this goroutine
		}
		runtime.UnlockOSThread()
		errc <- ferr
	}()
	return <-errc
}

// startIn starts cmd inside the named network namespace, from the
// spawner thread, with SIGKILL as its parent-death signal: no process of
// the lab outlives the process that owns the lab, even after kill -9.
func startIn(netnsName string, cmd *exec.Cmd) error {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	spawnOnce.Do(func() { go spawner() })
	req := spawnReq{netns: netnsName, cmd: cmd, errc: make(chan error, 1)}
	spawnc <- req
	return <-req.errc
}

// The kernel sends the parent-death signal when the *thread* that forked
// a process exits, not the process: a process forked from a thread the Go
// runtime later retires (any goroutine that exits while locked to it)
// would be killed with it. So every process is forked from one thread
// that is locked for the life of this process and never exits.
var (
	spawnOnce sync.Once
	spawnc    = make(chan spawnReq)
)

type spawnReq struct {
	netns string
	cmd   *exec.Cmd
	errc  chan error
}

func spawner() {
	runtime.LockOSThread() // never unlocked: the thread lives as long as the process
	orig, err := netns.Get()
	for req := range spawnc {
		if err != nil {
			req.errc <- fmt.Errorf("open current network namespace: %w", err)
			continue
		}
		req.errc <- spawnOne(orig, req)
	}
}

// spawnOne sets the thread's namespace explicitly for every request (the
// caller's own when none is named), so that a failed switch back cannot
// leak into the next start.
func spawnOne(orig netns.NsHandle, req spawnReq) error {
	target := orig
	if req.netns != "" {
		t, err := netns.GetFromName(req.netns)
		if err != nil {
			return fmt.Errorf("open network namespace %s: %w", req.netns, err)
		}
		defer t.Close()
		target = t
	}
	if err := netns.Set(target); err != nil {
		return fmt.Errorf("enter network namespace %s: %w", req.netns, err)
	}
	err := req.cmd.Start()
	if req.netns != "" {
		_ = netns.Set(orig) // best effort: the next request sets its own
	}
	return err
}

// DialIn opens a connection from inside the named network namespace; the
// connection is usable from any goroutine afterwards.
func DialIn(ctx context.Context, netnsName, network, addr string) (net.Conn, error) {
	var c net.Conn
	err := inNetns(netnsName, func() error {
		var d net.Dialer
		var err error
		c, err = d.DialContext(ctx, network, addr)
		return err
	})
	return c, err
}

// netnsMark is the alias the lab gives the loopback of every network
// namespace it creates. /run/netns is shared with container runtimes and
// `ip netns add`, so a name's prefix says nothing of who made it: lab down
// lists and removes only namespaces that carry the mark.
const netnsMark = "meshbench-lab"

// createNetns makes a new named network namespace, marked as the lab's.
func createNetns(name string) error {
	if err := os.MkdirAll(netnsDir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", netnsDir, err)
	}
	return onOwnThread(name, func() error {
		ns, err := netns.NewNamed(name)
		if err != nil {
			return fmt.Errorf("create network namespace %s: %w", name, err)
		}
		defer ns.Close()
		// The thread is in the new namespace now.
		lo, err := netlink.LinkByName("lo")
		if err == nil {
			err = netlink.LinkSetAlias(lo, netnsMark)
		}
		if err != nil {
			return fmt.Errorf("mark network namespace %s as the lab's: %w", name, err)
		}
		return nil
	})
}

// marked says whether the named namespace carries the lab's mark.
func marked(name string) bool {
	h, err := handleAt(name)
	if err != nil {
		return false
	}
	defer h.Close()
	lo, err := h.LinkByName("lo")
	return err == nil && lo.Attrs().Alias == netnsMark
}

// deleteNetns unmounts and removes a named namespace; the kernel frees it,
// with its interfaces and iptables rules, once no process is left in it.
// A namespace that does not exist is not an error.
func deleteNetns(name string) error {
	p := filepath.Join(netnsDir, name)
	if err := unix.Unmount(p, unix.MNT_DETACH); err != nil && !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.ENOENT) {
		return fmt.Errorf("unmount network namespace %s: %w", name, err)
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove network namespace %s: %w", name, err)
	}
	return nil
}

// listNetns returns the named namespaces whose names start with prefix+"-"
// and that the lab made (marked).
func listNetns(prefix string) ([]string, error) {
	ents, err := os.ReadDir(netnsDir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list network namespaces: %w", err)
	}
	var names []string
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), prefix+"-") && marked(e.Name()) {
			names = append(names, e.Name())
		}
	}
	return names, nil
}

// setSysctls writes /proc/sys/net values from inside a namespace: the
// files there belong to the namespace of the thread that opens them.
func setSysctls(netnsName string, kv map[string]string) error {
	return inNetns(netnsName, func() error {
		for k, v := range kv {
			p := "/proc/sys/net/" + strings.ReplaceAll(k, ".", "/")
			if err := os.WriteFile(p, []byte(v), 0o644); err != nil {
				return fmt.Errorf("sysctl net.%s=%s in %s: %w", k, v, netnsName, err)
			}
		}
		return nil
	})
}
