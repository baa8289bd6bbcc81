package dataplane

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"time"
)

// Remove undoes the installation: capture first, so that traffic flows
// directly again, then the proxies, then their files.
func (in *Installation) Remove(ctx context.Context) error {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.removed {
		return nil
	}
	in.removed = true
	if in.stopBound != nil {
		close(in.stopBound)
	}
	var errs []error
	for i := len(in.captures) - 1; i >= 0; i-- {
		cp := in.captures[i]
		for _, cm := range cp.Remove {
			if _, err := in.c.Run(ctx, cp.Netns, cm.Stdin, cm.Args...); err != nil && !cm.Tolerant {
				errs = append(errs, fmt.Errorf("remove capture in %s: %w", cp.Netns, err))
			}
		}
	}
	if len(in.captures) > 0 {
		if err := in.resetConnections(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	keys := make([]string, 0, len(in.sidecars))
	for k := range in.sidecars {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		pod := podByKey(in.inv, k)
		if err := in.c.RemoveContainer(ctx, pod.Namespace, pod.Name, in.settings.profile().Family().SidecarContainer); err != nil {
			errs = append(errs, err)
		}
	}
	for _, p := range in.pods {
		if err := in.c.RemovePod(ctx, p.Namespace, p.Name); err != nil {
			errs = append(errs, err)
		}
	}
	// After the proxies, which would otherwise retry it.
	if err := in.plane.stop(ctx); err != nil {
		errs = append(errs, err)
	}
	if err := os.RemoveAll(in.o.Dir); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// resetConnections aborts the established TCP connections of the meshed
// pods (ss -K), as the pod restart that sidecar injection needs would:
// connections an app opened before capture changed would otherwise go on
// around the mesh (plaintext, unmeasured) or, once captured mid-stream,
// be reset on their next request; after removal, the same for
// connections into proxies that are going away.
func (in *Installation) resetConnections(ctx context.Context) error {
	var errs []error
	for _, p := range in.inv.meshedPods("") {
		if _, err := in.c.Run(ctx, p.Netns, nil, "ss", "-tnK", "state", "established"); err != nil {
			errs = append(errs, fmt.Errorf("reset connections of %s: %w", p.Key(), err))
		}
	}
	return errors.Join(errs...)
}

// rollback removes a failed installation with a fresh, short deadline:
// the caller's context may be what failed.
func (in *Installation) rollback() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := in.Remove(ctx); err != nil {
		in.o.Logger.Warn("mesh rollback incomplete", "err", err)
	}
}

func podByKey(v *view, key string) *Pod {
	for i := range v.Pods {
		if v.Pods[i].Key() == key {
			return &v.Pods[i]
		}
	}
	return &Pod{}
}

// Proxies lists the proxies with the hash of each bootstrap.
func (in *Installation) Proxies() []ProxyRecord {
	in.mu.Lock()
	defer in.mu.Unlock()
	out := append([]ProxyRecord(nil), in.records...)
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
