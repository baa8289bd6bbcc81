package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/rogpeppe/go-internal/testscript"
)

// TestMain lets the test binary act as meshbench inside testscript
// scripts, so that the scripts run the real command line end to end.
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"meshbench": func() {
			limitAddressSpace()
			os.Exit(Main(context.Background(), Streams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}, os.Args[1:]))
		},
	})
}

// TestScripts runs every testdata/script/*.txtar: each is a small
// shell-like session with its files and the output it expects.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{Dir: "testdata/script", Condition: condition,
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){"exits": exits}})
}

// exits is "exits CODE PROGRAM ARGS...": exec that also asserts the exit
// code, which "! exec" does not (any non-zero code passes it), so that a
// script pins the code the README's table gives each kind of mistake.
// Its stdout and stderr are kept for the commands after it, as exec's are.
func exits(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exits CODE PROGRAM [ARGS...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("exits: code %q: %v", args[0], err)
	}
	got := 0
	if err := ts.Exec(args[1], args[2:]...); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			ts.Fatalf("exits: %v", err)
		}
		got = ee.ExitCode()
	}
	if got != want {
		ts.Fatalf("%s exited %d, want %d", args[1], got, want)
	}
}

// condition adds [root]: whether the scripts run as root, which the
// lab's preflight checks for.
func condition(cond string) (bool, error) {
	if cond == "root" {
		return os.Geteuid() == 0, nil
	}
	return false, fmt.Errorf("unknown condition %q", cond)
}

// limitAddressSpaceEnv, set to a number of bytes, caps the address space
// of a meshbench a test runs (RLIMIT_AS), so that a regression that reads
// a hostile file whole fails that run, not the shared machine.
const limitAddressSpaceEnv = "MESHBENCH_TEST_LIMIT_AS"

func limitAddressSpace() {
	v := os.Getenv(limitAddressSpaceEnv)
	if v == "" {
		return
	}
	n, err := strconv.ParseUint(v, 10, 64)
	if err == nil {
		err = unix.Setrlimit(unix.RLIMIT_AS, &unix.Rlimit{Cur: n, Max: n})
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s=%s: %v\n", limitAddressSpaceEnv, v, err)
		os.Exit(2)
	}
}
