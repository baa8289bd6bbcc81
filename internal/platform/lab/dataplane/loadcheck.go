package dataplane

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"syscall"
)

// validation is one role's configuration check, made once per install.
type validation struct {
	once sync.Once
	err  error
}

// validateOnce has Envoy check the configuration of the first proxy of
// each role (`envoy --mode validate`), so that a release that cannot load
// what meshbench writes (a field newer than it) fails the install with
// Envoy's own reason, naming the release, before any proxy starts.
func (in *Installation) validateOnce(ctx context.Context, p *proxy) error {
	in.mu.Lock()
	v := in.validated[string(p.Role)]
	if v == nil {
		v = &validation{}
		in.validated[string(p.Role)] = v
	}
	in.mu.Unlock()
	v.once.Do(func() { v.err = checkLoads(ctx, in.envoy, in.version, string(p.Role), p.path(configFile), p.UID) })
	return v.err
}

// checkLoads runs `envoy --mode validate` on one configuration as the
// proxy's user: validation opens the access log files, and one it created
// as root the proxy could not open.
func checkLoads(ctx context.Context, bin, version, role, config string, uid int) error {
	cmd := exec.CommandContext(ctx, bin, "--mode", "validate", "-c", config,
		"--disable-hot-restart", "-l", "error")
	if uid != 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(uid)}}
	}
	out, err := cmd.CombinedOutput()
	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	why := envoyReason(out)
	if why == "" { // it did not run: the exec failed for the proxy's user
		why = err.Error()
	}
	return fmt.Errorf("envoy %s (%s) cannot load the %s configuration meshbench writes for Envoy %s: %s",
		version, bin, role, ExpectedEnvoy, why)
}

// envoyReason is the lines of Envoy's output that say why it refused a
// configuration, without its log prefixes' noise.
func envoyReason(out []byte) string {
	var lines []string
	for _, l := range strings.Split(string(bytes.TrimSpace(out)), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) > 3 {
		lines = lines[len(lines)-3:]
	}
	return strings.Join(lines, "; ")
}
