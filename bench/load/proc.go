package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// niceness is the scheduling priority of nginx and of every tool. The
// machine may be shared: a raised priority keeps other work from deciding
// the figures, the same for every tool.
var niceness = -10

// proc is what one pinned tool run cost and printed.
type proc struct {
	stdout, stderr []byte
	cpu            time.Duration // user + system, from the child's rusage
	wall           time.Duration
}

// runPinned runs a tool pinned to the generator CPU. Its CPU time comes
// from wait4's rusage, the same way for every tool. during, if set, runs
// alongside with the tool's pid.
func runPinned(ctx context.Context, stdin io.Reader, during func(pid int), name string, args ...string) (proc, error) {
	cmd := exec.CommandContext(ctx, "nice", append([]string{"-n", fmt.Sprint(niceness), "taskset", "-c", fmt.Sprint(generatorCPU), name}, args...)...)
	var out, errOut bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, &out, &errOut
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return proc{}, err
	}
	if during != nil {
		go during(cmd.Process.Pid)
	}
	err := cmd.Wait()
	p := proc{stdout: out.Bytes(), stderr: errOut.Bytes(), wall: time.Since(start)}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		p.cpu = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	if err != nil {
		return p, fmt.Errorf("%s: %w\n%s", name, err, tail(errOut.Bytes()))
	}
	return p, nil
}

func tail(b []byte) string {
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return string(b)
}

// rss reads a process's resident set size in bytes.
func rss(pid int) (int64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("no VmRSS for pid %d", pid)
}
