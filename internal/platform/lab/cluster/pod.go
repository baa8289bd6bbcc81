package cluster

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"
)

// pod is a pod's network and containers.
type pod struct {
	lab    *Lab
	spec   PodSpec // Containers holds only the spec it was created with
	node   *node
	ip     netip.Addr
	netns  string
	portID uint32
	log    *os.File

	containers []*container // under Lab.mu
}

func (p *pod) key() string { return podKey(p.spec.Namespace, p.spec.Name) }

func (p *pod) containersCopy() []*container {
	p.lab.mu.Lock()
	defer p.lab.mu.Unlock()
	return append([]*container(nil), p.containers...)
}

func (p *pod) closeLog() {
	if p.log != nil {
		p.log.Close()
	}
}

// deleteGrace is how long a container has to exit after SIGTERM.
const deleteGrace = 2 * time.Second

// createParallelism bounds concurrent pod creation: each step is a short
// system call, so more than a few per CPU only queues in the kernel.
func createParallelism() int { return 4 * runtime.NumCPU() }

// CreatePods creates pods and starts their containers; it returns once
// every container has been started, not once they are ready (see
// WaitReady). If any pod fails, the pods of this call are removed.
func (l *Lab) CreatePods(ctx context.Context, specs []PodSpec) error {
	pods, err := l.admit(specs)
	if err != nil {
		return err
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(createParallelism())
	for _, p := range pods {
		g.Go(func() error { return l.startPod(gctx, p) })
	}
	if err := g.Wait(); err != nil {
		rctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		keys := make([]string, len(pods))
		for i, p := range pods {
			keys[i] = p.key()
		}
		return errors.Join(err, l.DeletePods(rctx, keys...))
	}
	return nil
}

// admit validates specs and reserves their names, addresses and veths.
func (l *Lab) admit(specs []PodSpec) ([]*pod, error) {
	for _, s := range specs {
		if err := validatePod(s); err != nil {
			return nil, err
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil, errors.New("lab is down")
	}
	var pods []*pod
	undo := func() {
		for _, p := range pods {
			delete(l.pods, p.key())
			if !p.spec.HostNetwork {
				p.node.ipam.Release(p.ip)
			}
		}
	}
	for _, s := range specs {
		n := l.node(s.Node)
		if n == nil {
			undo()
			return nil, fmt.Errorf("pod %s/%s: no node %q", s.Namespace, s.Name, s.Node)
		}
		p := &pod{lab: l, spec: s, node: n}
		if _, ok := l.pods[p.key()]; ok {
			undo()
			return nil, fmt.Errorf("pod %s exists", p.key())
		}
		if s.HostNetwork {
			p.ip, p.netns = n.ip, n.netns
		} else {
			ip, err := n.ipam.Allocate()
			if err != nil {
				undo()
				return nil, fmt.Errorf("pod %s on node %s: %w", p.key(), n.Name, err)
			}
			l.portID++
			p.ip, p.portID, p.netns = ip, l.portID, PodNetns(l.cfg.Prefix, s.Namespace, s.Name)
		}
		l.pods[p.key()] = p
		pods = append(pods, p)
	}
	l.changedLocked()
	return pods, nil
}

func validatePod(s PodSpec) error {
	if !nameRE.MatchString(s.Namespace) || !nameRE.MatchString(s.Name) {
		return fmt.Errorf("pod %q in namespace %q: names must be lower-case letters, digits and dashes", s.Name, s.Namespace)
	}
	for k, v := range s.Sysctls {
		switch {
		case s.HostNetwork:
			return fmt.Errorf("pod %s/%s: sysctl %s: a host-network pod shares its node's network namespace and may set no sysctl", s.Namespace, s.Name, k)
		case !sysctlRE.MatchString(k):
			return fmt.Errorf("pod %s/%s: sysctl %q: want a net.* name such as net.ipv4.tcp_tw_reuse", s.Namespace, s.Name, k)
		case v == "" || strings.ContainsAny(v, "\n\x00"):
			return fmt.Errorf("pod %s/%s: sysctl %s: value %q is empty or has a line break", s.Namespace, s.Name, k, v)
		}
	}
	seen := map[string]bool{}
	for _, c := range s.Containers {
		if err := validateContainer(c); err != nil {
			return fmt.Errorf("pod %s/%s: %w", s.Namespace, s.Name, err)
		}
		if seen[c.Name] {
			return fmt.Errorf("pod %s/%s: container %q given twice", s.Namespace, s.Name, c.Name)
		}
		seen[c.Name] = true
	}
	return nil
}

func validateContainer(c ContainerSpec) error {
	if !nameRE.MatchString(c.Name) {
		return fmt.Errorf("container name %q: want lower-case letters, digits and dashes", c.Name)
	}
	if len(c.Command) == 0 {
		return fmt.Errorf("container %s: no command", c.Name)
	}
	if _, err := exec.LookPath(c.Command[0]); err != nil {
		return fmt.Errorf("container %s: %w", c.Name, err)
	}
	switch c.Restart {
	case "", RestartAlways, RestartOnFailure, RestartNever:
	default:
		return fmt.Errorf("container %s: restart policy %q: want Always, OnFailure or Never", c.Name, c.Restart)
	}
	return nil
}

// startPod wires a pod's network, opens its log and starts its containers.
func (l *Lab) startPod(ctx context.Context, p *pod) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if !p.spec.HostNetwork {
		if err := setupPodNet(p.node.nl, p.netns, p.ip, p.portID); err != nil {
			return err
		}
		if len(p.spec.Sysctls) > 0 {
			kv := map[string]string{}
			for k, v := range p.spec.Sysctls {
				kv[strings.TrimPrefix(k, "net.")] = v
			}
			if err := setSysctls(p.netns, kv); err != nil {
				return fmt.Errorf("pod %s: %w", p.key(), err)
			}
		}
	}
	f, err := os.OpenFile(l.liveLog(p.spec.Namespace, p.spec.Name), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("pod %s: log file: %w", p.key(), err)
	}
	p.log = f
	for _, cs := range p.spec.Containers {
		if err := l.startContainer(p, cs); err != nil {
			return err
		}
	}
	return nil
}

// DeletePods stops the pods' containers (SIGTERM, then SIGKILL after a
// grace period) and removes their namespaces, veths, addresses and
// cgroups. Their endpoints leave the Services first. Unknown keys
// ("namespace/name") are ignored.
func (l *Lab) DeletePods(ctx context.Context, keys ...string) error {
	l.mu.Lock()
	var pods []*pod
	for _, k := range keys {
		if p, ok := l.pods[k]; ok {
			pods = append(pods, p)
			delete(l.pods, k)
		}
	}
	l.changedLocked()
	l.mu.Unlock()
	g, _ := errgroup.WithContext(ctx)
	g.SetLimit(createParallelism())
	for _, p := range pods {
		g.Go(func() error { return l.removePod(ctx, p) })
	}
	return g.Wait()
}

func (l *Lab) removePod(ctx context.Context, p *pod) error {
	cs := p.containersCopy()
	for _, c := range cs {
		c.stop(deleteGrace)
	}
	var errs []error
	for _, c := range cs {
		select {
		case <-c.done:
		case <-ctx.Done():
			errs = append(errs, fmt.Errorf("pod %s: container %s did not stop: %w", p.key(), c.spec.Name, ctx.Err()))
		}
	}
	if !p.spec.HostNetwork {
		if err := teardownPodNet(p.node.nl, p.netns, p.portID); err != nil {
			errs = append(errs, err)
		}
		l.mu.Lock()
		p.node.ipam.Release(p.ip)
		l.mu.Unlock()
	}
	if err := l.cg.remove(filepath.Join(nodeCgroup(p.node.Name), p.spec.Namespace+"_"+p.spec.Name)); err != nil {
		errs = append(errs, err)
	}
	p.closeLog()
	return errors.Join(errs...)
}

// Pods returns every pod, sorted by namespace and name.
func (l *Lab) Pods() []Pod {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]Pod, 0, len(l.pods))
	for _, p := range l.pods {
		out = append(out, p.viewLocked())
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key() < out[j].Key() })
	return out
}

// Pod returns one pod.
func (l *Lab) Pod(namespace, name string) (Pod, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	p, ok := l.pods[podKey(namespace, name)]
	if !ok {
		return Pod{}, false
	}
	return p.viewLocked(), true
}

func (p *pod) viewLocked() Pod {
	v := Pod{Namespace: p.spec.Namespace, Name: p.spec.Name, Node: p.node.Name, Labels: p.spec.Labels,
		ServiceAccount: p.spec.ServiceAccount, HostNetwork: p.spec.HostNetwork, IP: p.ip, Netns: p.netns, Ready: true}
	for _, c := range p.containers {
		cv := c.viewLocked()
		v.Containers = append(v.Containers, cv)
		// A container that ran to completion does not hold readiness.
		if !cv.Ready && !cv.Exited {
			v.Ready = false
		}
	}
	return v
}

// WaitReady waits until the pods are ready and the Service rules on every
// node include them. With no keys it waits for every pod.
func (l *Lab) WaitReady(ctx context.Context, keys ...string) error {
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	for {
		notReady, v := l.notReady(keys)
		if len(notReady) == 0 && l.proxy.syncedTo(v) {
			// Other processes (lab status, exec) see the pods at once.
			return l.state.write()
		}
		select {
		case <-ctx.Done():
			if len(notReady) == 0 {
				return fmt.Errorf("service rules not applied: %w", errors.Join(ctx.Err(), l.proxy.err()))
			}
			return fmt.Errorf("%d pods not ready (%s%s): %w", len(notReady), notReady[0], l.logTail(notReady[0]), ctx.Err())
		case <-t.C:
		}
	}
}

func (l *Lab) notReady(keys []string) ([]string, uint64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(keys) == 0 {
		for k := range l.pods {
			keys = append(keys, k)
		}
		sort.Strings(keys)
	}
	var out []string
	for _, k := range keys {
		p, ok := l.pods[k]
		if !ok {
			out = append(out, k+" (no such pod)")
			continue
		}
		if !p.viewLocked().Ready {
			out = append(out, k)
		}
	}
	return out, l.version
}

// logTail returns the end of a pod's log and where to read all of it,
// for error messages.
func (l *Lab) logTail(key string) string {
	ns, name, _ := strings.Cut(key, "/")
	where := "; its log: " + l.LogPath(ns, name)
	// Only the end is read: a pod that logs without pause can leave a log
	// of any size.
	f, err := os.Open(l.liveLog(ns, name))
	if err != nil {
		return where
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || st.Size() == 0 {
		return where
	}
	n := min(st.Size(), 400)
	b := make([]byte, n)
	if _, err := f.ReadAt(b, st.Size()-n); err != nil {
		return where
	}
	return where + "; log ends: " + string(b)
}

// changedLocked records a change of pods, readiness or Services: the
// Service rules and the state file follow.
func (l *Lab) changedLocked() {
	l.version++
	if l.proxy != nil {
		l.proxy.kick()
	}
	if l.state != nil {
		l.state.kick()
	}
}
