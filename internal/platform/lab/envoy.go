package lab

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/meshbench/meshbench/internal/platform/lab/dataplane"
)

// envoyVersionTimeout bounds `envoy --version`, only to catch a binary
// that hangs: a normal host answers within a second, but Envoy's start
// alone has taken over 5 s under qemu's emulation on a loaded host.
const envoyVersionTimeout = 30 * time.Second

// envoyInfo finds the version of the Envoy the lab's meshes run (the one
// dataplane.FindEnvoy picks) once, for the results' provenance.
type envoyInfo struct {
	timeout time.Duration
	mu      sync.Mutex
	done    bool
	version string
}

// get returns the Envoy version, such as "1.40.0", or "" with a warning
// when there is no Envoy or it does not answer: a baseline-only study runs
// without one.
func (e *envoyInfo) get(ctx context.Context, log *slog.Logger) string {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.done {
		return e.version
	}
	bin, err := dataplane.FindEnvoy()
	if err != nil {
		log.Warn("no Envoy found: the results will not record its version", "err", err)
		e.done = true
		return ""
	}
	timeout := e.timeout
	if timeout == 0 {
		timeout = envoyVersionTimeout
	}
	vctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	v, err := dataplane.EnvoyVersion(vctx, bin)
	if err != nil {
		if ctx.Err() != nil {
			return "" // the caller gave up: ask again next time
		}
		log.Warn("could not read the Envoy version: the results will not record it", "envoy", bin, "err", err)
	}
	e.version, e.done = v, true
	return v
}
