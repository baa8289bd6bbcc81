package cluster

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"
)

// AddContainer starts one more container in a running pod, in the pod's
// network namespace and its own cgroup: a sidecar.
func (l *Lab) AddContainer(ctx context.Context, namespace, pod string, cs ContainerSpec) error {
	if err := validateContainer(cs); err != nil {
		return fmt.Errorf("pod %s/%s: %w", namespace, pod, err)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	l.mu.Lock()
	p, ok := l.pods[podKey(namespace, pod)]
	if ok && slices.ContainsFunc(p.containers, func(c *container) bool { return c.spec.Name == cs.Name }) {
		l.mu.Unlock()
		return fmt.Errorf("pod %s/%s already has a container %s", namespace, pod, cs.Name)
	}
	l.mu.Unlock()
	if !ok {
		return fmt.Errorf("no pod %s/%s", namespace, pod)
	}
	if err := l.startContainer(p, cs); err != nil {
		// A container whose first start failed is not left behind to
		// retry: its caller, told it failed, does not remove it, and the
		// next AddContainer of that name would be refused.
		if _, c, cerr := l.container(namespace, pod, cs.Name); cerr == nil {
			err = errors.Join(err, l.removeContainer(context.Background(), p, c, 0))
		}
		return err
	}
	return nil
}

// RemoveContainer stops a container (SIGTERM, SIGKILL after a grace
// period) and removes its cgroup.
func (l *Lab) RemoveContainer(ctx context.Context, namespace, pod, name string) error {
	p, c, err := l.container(namespace, pod, name)
	if err != nil {
		return err
	}
	return l.removeContainer(ctx, p, c, deleteGrace)
}

func (l *Lab) removeContainer(ctx context.Context, p *pod, c *container, grace time.Duration) error {
	name := c.spec.Name
	c.stop(grace)
	select {
	case <-c.done:
	case <-ctx.Done():
		return fmt.Errorf("pod %s container %s did not stop: %w", p.key(), name, ctx.Err())
	}
	l.mu.Lock()
	p.containers = slices.DeleteFunc(p.containers, func(x *container) bool { return x == c })
	l.changedLocked()
	l.mu.Unlock()
	return l.cg.remove(c.rel)
}

// RestartContainer stops a container's process and starts it again at
// once, as after a configuration change; the restart is counted.
func (l *Lab) RestartContainer(ctx context.Context, namespace, pod, name string) error {
	_, c, err := l.container(namespace, pod, name)
	if err != nil {
		return err
	}
	select {
	case c.restartc <- struct{}{}:
	default: // a restart is already pending
	}
	return ctx.Err()
}

// WaitContainer waits until a container with restart policy Never or
// OnFailure has stopped for good, and returns its exit code.
func (l *Lab) WaitContainer(ctx context.Context, namespace, pod, name string) (int, error) {
	_, c, err := l.container(namespace, pod, name)
	if err != nil {
		return 0, err
	}
	if c.spec.Restart == RestartAlways {
		return 0, errors.New("wait for a container: its restart policy is Always, it never ends")
	}
	select {
	case <-c.done:
	case <-ctx.Done():
		return 0, ctx.Err()
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return c.exitCode, nil
}

func (l *Lab) container(namespace, pod, name string) (*pod, *container, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	p, ok := l.pods[podKey(namespace, pod)]
	if !ok {
		return nil, nil, fmt.Errorf("no pod %s/%s", namespace, pod)
	}
	for _, c := range p.containers {
		if c.spec.Name == name {
			return p, c, nil
		}
	}
	return nil, nil, fmt.Errorf("pod %s/%s has no container %s", namespace, pod, name)
}
