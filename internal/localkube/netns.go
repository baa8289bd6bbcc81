package localkube

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os/exec"
	"runtime"
	"sync"
	"syscall"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// Netns is a network namespace holding only loopback, owned by one locked
// OS thread. Processes forked through it get SIGKILL when that thread
// exits, so none outlives the namespace.
type Netns struct {
	reqs chan func()
	quit chan struct{}
	done chan struct{}
	path string // the namespace as its thread holds it, for setns(2)

	closeOnce sync.Once
}

// NewNetns creates the namespace, brings loopback up, and refuses to go
// on unless loopback is its only interface.
func NewNetns() (*Netns, error) {
	n := &Netns{reqs: make(chan func()), quit: make(chan struct{}), done: make(chan struct{})}
	errc := make(chan error, 1)
	go func() {
		// Never unlocked: the thread leaves with its namespace when the
		// goroutine returns.
		runtime.LockOSThread()
		defer close(n.done)
		if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
			errc <- fmt.Errorf("create a network namespace (needs root): %w", err)
			return
		}
		if err := isolate(); err != nil {
			errc <- err
			return
		}
		n.path = fmt.Sprintf("/proc/%d/task/%d/ns/net", unix.Getpid(), unix.Gettid())
		errc <- nil
		for {
			select {
			case f := <-n.reqs:
				f()
			case <-n.quit:
				return
			}
		}
	}()
	if err := <-errc; err != nil {
		return nil, err
	}
	return n, nil
}

// isolate brings loopback up and checks that it is the only interface.
func isolate() error {
	lo, err := netlink.LinkByName("lo")
	if err != nil {
		return fmt.Errorf("loopback: %w", err)
	}
	if err := netlink.LinkSetUp(lo); err != nil {
		return fmt.Errorf("bring loopback up: %w", err)
	}
	links, err := netlink.LinkList()
	if err != nil {
		return err
	}
	for _, l := range links {
		if l.Attrs().Name != "lo" {
			return fmt.Errorf("network namespace is not isolated: it has interface %s", l.Attrs().Name)
		}
	}
	return nil
}

// do runs f on the namespace's thread.
func (n *Netns) do(f func()) error {
	finished := make(chan struct{})
	select {
	case n.reqs <- func() { f(); close(finished) }:
	case <-n.done:
		return errors.New("network namespace is closed")
	}
	<-finished
	return nil
}

// Start starts cmd inside the namespace.
func (n *Netns) Start(cmd *exec.Cmd) error {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	var err error
	if e := n.do(func() { err = cmd.Start() }); e != nil {
		return e
	}
	return err
}

// Path names the namespace for a process that joins it (nsenter
// --net=PATH): valid while the namespace is open. A process that joined
// it keeps it alive, so stop such processes before Close.
func (n *Netns) Path() string { return n.path }

// DialContext opens a connection from inside the namespace; it is usable
// from any goroutine afterwards.
func (n *Netns) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	var c net.Conn
	var err error
	if e := n.do(func() {
		var d net.Dialer
		c, err = d.DialContext(ctx, network, addr)
	}); e != nil {
		return nil, e
	}
	return c, err
}

// Close ends the namespace's thread. Processes started in it get SIGKILL;
// stop them first to let them exit cleanly.
func (n *Netns) Close() {
	n.closeOnce.Do(func() { close(n.quit) })
	<-n.done
}
