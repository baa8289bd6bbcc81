package cluster

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
)

// proxier keeps every node's Service rules in step with the Services and
// their ready endpoints, as kube-proxy does. Changes are coalesced: a sync
// renders the whole state once, however many changes came in meanwhile.
type proxier struct {
	l     *Lab
	kickc chan struct{}
	quit  chan struct{}
	done  chan struct{}

	mu      sync.Mutex
	synced  uint64 // Lab.version the rules reflect
	lastErr error

	// Owned by the sync loop.
	last  []byte
	stale map[string]bool
}

func newProxier(l *Lab) *proxier {
	return &proxier{l: l, kickc: make(chan struct{}, 1), quit: make(chan struct{}), done: make(chan struct{})}
}

func (p *proxier) start() {
	go p.loop()
	p.kick()
}

func (p *proxier) kick() {
	select {
	case p.kickc <- struct{}{}:
	default:
	}
}

func (p *proxier) stop() {
	close(p.quit)
	<-p.done
}

func (p *proxier) loop() {
	defer close(p.done)
	for {
		select {
		case <-p.quit:
			return
		case <-p.kickc:
		}
		if err := p.sync(); err != nil {
			p.l.log.Warn("service rules", "err", err)
			p.mu.Lock()
			p.lastErr = err
			p.mu.Unlock()
			select {
			case <-p.quit:
				return
			case <-time.After(500 * time.Millisecond):
				p.kick()
			}
		}
	}
}

func (p *proxier) sync() error {
	l := p.l
	l.mu.Lock()
	v := l.version
	var rules []svcRule
	for _, s := range l.services {
		sv := l.serviceViewLocked(s)
		rules = append(rules, svcRule{Key: sv.Key(), VIP: sv.VIP, Port: sv.Port, Endpoints: sv.Endpoints})
	}
	l.mu.Unlock()
	text, used := renderServices(rules, p.stale)
	if !bytes.Equal(text, p.last) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		g, gctx := errgroup.WithContext(ctx)
		for _, n := range l.nodes {
			g.Go(func() error {
				if _, err := l.cfg.Runner.Run(gctx, restoreCmd(n.netns, text)); err != nil {
					return fmt.Errorf("node %s: %w", n.Name, err)
				}
				return nil
			})
		}
		if err := g.Wait(); err != nil {
			return err
		}
		p.last, p.stale = text, used
	}
	p.mu.Lock()
	p.synced, p.lastErr = v, nil
	p.mu.Unlock()
	return nil
}

// syncedTo reports whether the rules reflect version v or later.
func (p *proxier) syncedTo(v uint64) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.synced >= v
}

func (p *proxier) err() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.lastErr
}
