package cluster

import (
	"context"
	"fmt"
	"net/netip"
	"sort"
)

// service is a Service and its virtual IP.
type service struct {
	spec ServiceSpec
	vip  netip.Addr
}

// ApplyService creates a Service, or updates one of the same namespace
// and name, keeping its virtual IP. The rules follow asynchronously; see
// WaitReady.
func (l *Lab) ApplyService(ctx context.Context, spec ServiceSpec) (Service, error) {
	if err := ctx.Err(); err != nil {
		return Service{}, err
	}
	if !nameRE.MatchString(spec.Namespace) || !nameRE.MatchString(spec.Name) {
		return Service{}, fmt.Errorf("service %q in namespace %q: names must be lower-case letters, digits and dashes", spec.Name, spec.Namespace)
	}
	if spec.Port <= 0 || spec.Port > 65535 {
		return Service{}, fmt.Errorf("service %s/%s: port %d out of range", spec.Namespace, spec.Name, spec.Port)
	}
	if spec.TargetPort == 0 {
		spec.TargetPort = spec.Port
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	key := podKey(spec.Namespace, spec.Name)
	s, ok := l.services[key]
	if !ok {
		vip, err := l.vips.Allocate()
		if err != nil {
			return Service{}, fmt.Errorf("service %s: %w", key, err)
		}
		s = &service{vip: vip}
		l.services[key] = s
	}
	s.spec = spec
	l.changedLocked()
	return l.serviceViewLocked(s), nil
}

// DeleteService removes a Service and its rules; an unknown one is not an
// error.
func (l *Lab) DeleteService(ctx context.Context, namespace, name string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	key := podKey(namespace, name)
	if s, ok := l.services[key]; ok {
		delete(l.services, key)
		l.vips.Release(s.vip)
		l.changedLocked()
	}
	return ctx.Err()
}

// Services returns every Service with its ready endpoints, sorted.
func (l *Lab) Services() []Service {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]Service, 0, len(l.services))
	for _, s := range l.services {
		out = append(out, l.serviceViewLocked(s))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key() < out[j].Key() })
	return out
}

// Service returns one Service.
func (l *Lab) Service(namespace, name string) (Service, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	s, ok := l.services[podKey(namespace, name)]
	if !ok {
		return Service{}, false
	}
	return l.serviceViewLocked(s), true
}

// serviceViewLocked computes the endpoints: the ready pods the selector
// matches, in the Service's namespace, sorted by address.
func (l *Lab) serviceViewLocked(s *service) Service {
	v := Service{ServiceSpec: s.spec, VIP: s.vip}
	for _, p := range l.pods {
		if p.spec.Namespace != s.spec.Namespace || !selects(s.spec.Selector, p.spec.Labels) {
			continue
		}
		if p.viewLocked().Ready {
			v.Endpoints = append(v.Endpoints, netip.AddrPortFrom(p.ip, uint16(s.spec.TargetPort)))
		}
	}
	sort.Slice(v.Endpoints, func(i, j int) bool { return v.Endpoints[i].Compare(v.Endpoints[j]) < 0 })
	return v
}
