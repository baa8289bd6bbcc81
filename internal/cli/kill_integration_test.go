package cli

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/meshbench/meshbench/internal/platform/lab/dataplane"
	"github.com/meshbench/meshbench/internal/results"
	"github.com/meshbench/meshbench/internal/testenv"
)

// killStudy is as small as a study with a mesh gets: one tenant, the
// baseline and the sidecar, calibrated, one repetition of 1+2 s cells.
const killStudy = `apiVersion: meshbench.dev/v1alpha1
kind: Study
name: kill
workload: {graph: tiered}
meshes: [{profile: baseline}, {profile: sidecar}]
load: {rate: 20, connections: 4, duration: 2s, warmup: 1s}
repetitions: 1
order: {seed: 7}
scaling: {fraction: 0.2, measure: 1s, warmup: 1s}
`

// TestIntegrationKillRunInEveryPhase kills `meshbench run` with SIGKILL in
// each phase of a run, found from its progress output: the lab's
// processes must die with it, `meshbench lab down` must leave nothing of
// the run's lab, and `meshbench run --resume` must finish with the same
// cells as a run never interrupted.
func TestIntegrationKillRunInEveryPhase(t *testing.T) {
	testenv.Integration(t)
	testenv.NeedRoot(t)
	bin := os.Getenv("MESHBENCH_BIN")
	testenv.Need(t, bin != "", "MESHBENCH_BIN, the built binary (make build; scripts/test.sh sets it)")
	_, err := dataplane.FindEnvoy()
	testenv.Need(t, err == nil, "Envoy for the sidecar: %v", err)
	dir := t.TempDir()
	studyFile := filepath.Join(dir, "kill.yaml")
	if err := os.WriteFile(studyFile, []byte(killStudy), 0o644); err != nil {
		t.Fatal(err)
	}
	host := snapshotHost(t)
	// Other labs may run on this host's CPUs (the suite runs in parallel).
	run := func(args ...string) *exec.Cmd {
		return exec.Command(bin, append(args, "--shared-host", "-v")...)
	}

	full := filepath.Join(dir, "full")
	if out, err := run("run", studyFile, "--out", full).CombinedOutput(); err != nil {
		t.Fatalf("uninterrupted run: %v\n%s", err, out)
	}
	want := cellsOf(t, full)

	phases := []struct {
		name    string
		trigger *regexp.Regexp // the stderr line that starts the phase
		after   time.Duration  // how far into it to kill
	}{
		{"lab bring-up", regexp.MustCompile(`msg="the run's lab"`), 0},
		{"calibration", regexp.MustCompile(`msg="mesh installed" profile=baseline`), time.Second},
		{"mesh install", regexp.MustCompile(`msg="installing mesh" mesh=sidecar`), 200 * time.Millisecond},
		{"measurement", regexp.MustCompile(`msg=measuring`), 1500 * time.Millisecond},
		{"result writing", regexp.MustCompile(`^\[1/2\] .* rep 1: `), 0},
	}
	for _, ph := range phases {
		t.Run(strings.ReplaceAll(ph.name, " ", "-"), func(t *testing.T) {
			out := filepath.Join(dir, strings.ReplaceAll(ph.name, " ", "-"))
			name := killAt(t, run("run", studyFile, "--out", out), ph.trigger, ph.after)
			assertNoProcesses(t, name)
			if b, err := exec.Command(bin, "lab", "down", "--name", name).CombinedOutput(); err != nil {
				t.Fatalf("lab down --name %s: %v\n%s", name, err, b)
			}
			host.assertNothingLeft(t, name)
			if b, err := run("run", "--resume", out).CombinedOutput(); err != nil {
				t.Fatalf("resume after kill during %s: %v\n%s", ph.name, err, b)
			}
			if got := cellsOf(t, out); !slices.Equal(got, want) {
				t.Errorf("resumed run's cells %v, an uninterrupted run's %v", got, want)
			}
		})
	}
}

// TestIntegrationSignalsCleanUp sends `meshbench run` SIGHUP (a dropped
// ssh session) and SIGTERM while it measures: each is handled as Ctrl-C
// is, so the run removes its lab itself before it exits, leaving no
// namespace, process, cgroup or state, and its results resumable.
func TestIntegrationSignalsCleanUp(t *testing.T) {
	testenv.Integration(t)
	testenv.NeedRoot(t)
	bin := os.Getenv("MESHBENCH_BIN")
	testenv.Need(t, bin != "", "MESHBENCH_BIN, the built binary (make build; scripts/test.sh sets it)")
	dir := t.TempDir()
	studyFile := filepath.Join(dir, "signal.yaml")
	const study = `apiVersion: meshbench.dev/v1alpha1
kind: Study
name: signal
workload: {graph: tiered}
meshes: [{profile: baseline}]
load: {rate: 20, connections: 4, duration: 5s, warmup: 1s}
repetitions: 2
`
	if err := os.WriteFile(studyFile, []byte(study), 0o644); err != nil {
		t.Fatal(err)
	}
	host := snapshotHost(t)
	for _, sig := range []syscall.Signal{syscall.SIGHUP, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			out := filepath.Join(dir, strings.ReplaceAll(sig.String(), " ", "-"))
			cmd := exec.Command(bin, "run", studyFile, "--out", out, "--shared-host", "-v")
			name := signalAt(t, cmd, regexp.MustCompile(`msg=measuring`), time.Second, sig)
			if cmd.ProcessState.Success() {
				t.Errorf("the run exited 0 after %s", sig)
			}
			host.assertNothingLeft(t, name)
			if ix, err := results.ReadIndex(out); err != nil || ix.Complete {
				t.Errorf("results after %s: complete %v, %v; want an incomplete index to resume", sig, ix != nil && ix.Complete, err)
			}
		})
	}
}

// killAt starts cmd, SIGKILLs it once a stderr line matches trigger and
// after has passed, and returns the name of the run's lab.
func killAt(t *testing.T, cmd *exec.Cmd, trigger *regexp.Regexp, after time.Duration) string {
	t.Helper()
	return signalAt(t, cmd, trigger, after, syscall.SIGKILL)
}

// signalAt starts cmd, sends it sig once a stderr line matches trigger
// and after has passed, waits for it to exit, and returns the name of the
// run's lab.
func signalAt(t *testing.T, cmd *exec.Cmd, trigger *regexp.Regexp, after time.Duration, sig syscall.Signal) string {
	t.Helper()
	seen := signalOnLine(t, cmd, trigger, after, sig)
	nameRE := regexp.MustCompile(`msg="the run's lab" name=(\w+)`)
	for _, line := range seen {
		if m := nameRE.FindStringSubmatch(line); m != nil {
			return m[1]
		}
	}
	t.Fatalf("the run never named its lab:\n%s", strings.Join(seen, "\n"))
	return ""
}

// signalOnLine starts cmd, sends it sig once a stderr line matches
// trigger and after has passed, waits for it to exit, and returns its
// stderr lines to the trigger's.
func signalOnLine(t *testing.T, cmd *exec.Cmd, trigger *regexp.Regexp, after time.Duration, sig syscall.Signal) []string {
	t.Helper()
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Bounded for a hang only: under an emulated CPU (scripts/vmhost.sh) a
	// run takes about ten times as long as here.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	go func() {
		<-ctx.Done()
		_ = cmd.Process.Kill() // never hang the suite on a trigger not seen
	}()
	var seen []string
	hit := false
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		line := sc.Text()
		seen = append(seen, line)
		if trigger.MatchString(line) {
			hit = true
			time.Sleep(after)
			_ = cmd.Process.Signal(sig)
			break
		}
	}
	go func() { _, _ = io.Copy(io.Discard, stderr) }()
	_ = cmd.Wait()
	if !hit || ctx.Err() != nil {
		t.Fatalf("the run never reached %q:\n%s", trigger, strings.Join(seen, "\n"))
	}
	return seen
}

// cellsOf lists a finished run's cells as "mesh rN", sorted, and fails
// on a cell that was not measured. Whether a measured cell is ok or
// distorted (its load generator short of CPU) depends on the shared
// host's load at the time, not on how the run got there, so it is logged
// rather than compared.
func cellsOf(t *testing.T, dir string) []string {
	t.Helper()
	ix, err := results.ReadIndex(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !ix.Complete {
		t.Errorf("%s: the run is not complete", dir)
	}
	var out []string
	for _, c := range ix.Cells {
		switch c.Status {
		case results.StatusOK:
		case results.StatusDistorted:
			t.Logf("%s: cell %s distorted: %s", dir, c.ID, c.Reason)
		default:
			t.Errorf("%s: cell %s %s: %s", dir, c.ID, c.Status, c.Reason)
		}
		out = append(out, fmt.Sprintf("%s r%d", c.Mesh, c.Repetition))
	}
	slices.Sort(out)
	return out
}
