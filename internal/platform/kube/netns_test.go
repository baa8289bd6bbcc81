package kube

import (
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/vishvananda/netlink"
)

// Integration tests run inside a network namespace of their own holding
// only loopback: the test binary re-executes itself there, so that the
// control plane and everything it dials stay on this machine (with no
// route off it, a dial to a fake node's address fails at once).
const (
	envInNetns  = "MESHBENCH_KUBE_IT_NETNS" // set in the re-executed child
	envBinDir   = "MESHBENCH_KUBE_IT_BIN"   // the control plane's cache dir
	envNoReason = "MESHBENCH_KUBE_IT_SKIP"  // why integration tests skip
)

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() || os.Getenv(envInNetns) != "" {
		code := m.Run()
		stopCluster()
		os.Exit(code)
	}
	if !wantsIntegration() {
		os.Exit(m.Run())
	}
	// Build (or find cached) binaries here, where the module proxy is
	// reachable; the namespace has no network.
	dir, err := buildControlPlane()
	if err != nil {
		os.Setenv(envNoReason, "control-plane binaries cannot be built: "+err.Error())
		os.Exit(m.Run())
	}
	os.Setenv(envBinDir, dir)
	os.Exit(reexecInNetns())
}

// wantsIntegration reports whether -run can select an integration test.
func wantsIntegration() bool {
	f := flag.Lookup("test.run")
	return f == nil || f.Value.String() == "" || strings.Contains(f.Value.String(), "Integration")
}

// buildControlPlane runs the idempotent build script and returns the
// cache directory it printed last.
func buildControlPlane() (string, error) {
	script, err := filepath.Abs("../../../scripts/k8s-testbin.sh")
	if err != nil {
		return "", err
	}
	cmd := exec.Command(script)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("%s: %w", script, err)
	}
	lines := strings.Fields(strings.TrimSpace(string(out)))
	if len(lines) == 0 {
		return "", errors.New(script + " printed no directory")
	}
	return lines[len(lines)-1], nil
}

// reexecInNetns runs this test binary again in a new network namespace
// and returns its exit code.
func reexecInNetns() int {
	cmd := exec.Command(os.Args[0], os.Args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.Env = append(os.Environ(), envInNetns+"=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNET, Pdeathsig: syscall.SIGKILL}
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &exit):
		return exit.ExitCode()
	}
	fmt.Fprintf(os.Stderr, "kube integration tests: cannot enter a network namespace (%v); they will skip\n", err)
	cmd = exec.Command(os.Args[0], os.Args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.Env = append(os.Environ(), envInNetns+"=1", envNoReason+"=no network namespace: "+err.Error())
	if err := cmd.Run(); err != nil {
		if errors.As(err, &exit) {
			return exit.ExitCode()
		}
		return 1
	}
	return 0
}

// checkIsolated brings loopback up and refuses to go on unless it is the
// only interface and there is no route but loopback's: the hard rule that
// no traffic leaves the machine.
func checkIsolated() error {
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
	ifs, err := net.Interfaces()
	if err != nil {
		return err
	}
	if len(ifs) != 1 {
		return fmt.Errorf("network namespace has %d interfaces, want only loopback", len(ifs))
	}
	return nil
}
