package study

import (
	"context"
	"time"

	"github.com/meshbench/meshbench/internal/platform"
)

// quietPolicy is how the runner waits for a contended host before it
// measures again what contention spoiled: a noisy cell's next attempt, a
// capacity trial after a noisy one. On a virtual machine the hypervisor's
// share came and went within minutes here (from nothing to half the CPUs
// under the lab's kind of load), so a retry made at once mostly met the
// same contention and was spoiled again.
type quietPolicy struct {
	poll   time.Duration // between checks
	wait   time.Duration // the longest one wait lasts
	budget time.Duration // the most a run waits in all
	waited time.Duration // waited so far
}

var defaultQuiet = quietPolicy{poll: 10 * time.Second, wait: 2 * time.Minute, budget: 15 * time.Minute}

// waitQuiet returns once the platform finds its host quiet, after the
// policy's longest wait, or at once where the platform cannot tell, the
// run's budget for waiting is spent or the run accepts a shared host as
// it is. Only ctx's end is an error.
func (r *runner) waitQuiet(ctx context.Context) error {
	cm, ok := r.p.(platform.ContentionMeter)
	q := &r.quiet
	if !ok || q.waited >= q.budget || r.o.SharedHost {
		return nil
	}
	start := time.Now()
	for {
		c, err := cm.Contention(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			r.log.Warn("host contention not measured", "err", err)
			return nil
		}
		waited := time.Since(start)
		if c <= platform.ContentionLimit {
			q.waited += waited
			if waited >= q.poll {
				r.printf("noise: the host is quiet again (the hypervisor takes %.1f%% of the study's CPUs under load) after %s\n", 100*c, round(waited))
			}
			return nil
		}
		if waited >= q.wait || q.waited+waited >= q.budget {
			q.waited += waited
			r.printf("noise: the hypervisor still takes %.0f%% of the study's CPUs under load after %s of waiting (%s of the run's %s); measuring anyway\n",
				100*c, round(waited), round(q.waited), q.budget)
			return nil
		}
		r.printf("noise: the hypervisor takes %.0f%% of the study's CPUs under load (more than %.0f%%); waiting for the host to quiet (%s of at most %s)\n",
			100*c, 100*platform.ContentionLimit, round(waited), q.wait)
		select {
		case <-ctx.Done():
			q.waited += time.Since(start)
			return ctx.Err()
		case <-time.After(q.poll):
		}
	}
}
