package cluster

import (
	"context"
	"fmt"
	"os"
	"slices"
	"time"

	"golang.org/x/sys/unix"

	"github.com/meshbench/meshbench/internal/infra"
	"github.com/meshbench/meshbench/internal/platform"
)

// A virtual machine's CPUs are shared with other guests, and how much the
// hypervisor takes shows only when the guest wants its CPUs: an idle
// guest reads no steal at all. This host's hypervisor took from nothing
// to 30% of the lab's CPUs within the same hour, and when it took more
// than a few percent, most cells of a study went over the noise guard's
// 0.05 cores and were run again, up to three times, before being left
// out. So the preflight loads the study's CPUs for a moment, the way the
// lab does (see stealUnderLoad), and reads the steal time, to say so
// before a run starts rather than after it.

// contentionSpan is how long the check loads the CPUs.
const contentionSpan = time.Second

// ContentionFinding loads every CPU the lab's nodes may run on ("" in
// cpuLists: every CPU this process may use) for contentionSpan and reads
// the hypervisor's steal time on them. shared
// accepts a contended host, as it accepts another lab on the CPUs. The
// check only warns, above platform.ContentionLimit: one second's sample
// of a condition that comes and goes is no reason to refuse a run that
// watches every cell for it.
func ContentionFinding(ctx context.Context, cpuLists []string, shared bool) platform.Finding {
	f := platform.Finding{Check: "contention", Advisory: true}
	cpus, err := studyCPUs(cpuLists)
	if err != nil {
		f.Detail, f.Fix = err.Error(), "fix platform.nodes[].cpus in the study"
		return f
	}
	steal, err := stealUnderLoad(ctx, cpus, contentionSpan)
	if err != nil {
		f.Detail, f.Fix = err.Error(), "run on Linux with /proc mounted"
		return f
	}
	f.Detail = fmt.Sprintf("with CPUs %s passing a token for %s, the hypervisor took %.1f%% of them (steal time)", formatCPUs(cpus), contentionSpan, 100*steal)
	switch {
	case steal <= platform.ContentionLimit:
		f.OK = true
	case shared:
		f.OK = true
		f.Detail += "; shared host: measuring anyway, and cells over the noise guard are run again and then left out"
	default:
		f.Detail += fmt.Sprintf(", more than %.0f%%: most cells would go over the noise guard and be run again, then left out", 100*platform.ContentionLimit)
		f.Fix = "run on a host whose CPUs are not shared with other guests (a dedicated or larger instance), or try again later; --shared-host silences this"
	}
	return f
}

// Contention passes a token round the lab's CPUs for a second and returns
// the share of their time the hypervisor took (see stealUnderLoad).
func (l *Lab) Contention(ctx context.Context) (float64, error) {
	cpus, err := l.labCPUs()
	if err != nil {
		return 0, err
	}
	return stealUnderLoad(ctx, cpus, contentionSpan)
}

// studyCPUs is every CPU named in cpuLists, or every CPU this process may
// use when a node floats.
func studyCPUs(cpuLists []string) ([]int, error) {
	var out []int
	for _, l := range cpuLists {
		if l == "" {
			return allowedCPUs()
		}
		cpus, err := infra.ParseCPUList(l)
		if err != nil {
			return nil, err
		}
		out = append(out, cpus...)
	}
	if len(out) == 0 {
		return allowedCPUs()
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// stealUnderLoad passes a token around the CPUs for span, through a pipe
// from each CPU's thread to the next, and returns the steal time on those
// CPUs over their time in the span. Each CPU sleeps and wakes thousands
// of times a second, as the lab's proxies do; a busy loop never sleeps,
// and a hypervisor that is slow to give a waking CPU back shows only in
// wake-ups: on this host a busy loop read 0.5% steal where the token read
// 26-29%, and the lab's cells 0.3 to 0.6 cores.
func stealUnderLoad(ctx context.Context, cpus []int, span time.Duration) (float64, error) {
	n := len(cpus)
	// Thread k reads its token from in[k] and passes it to out[(k+1)%n].
	in, out := make([]int, n), make([]int, n)
	for k := range n {
		var p [2]int
		if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
			for j := range k {
				unix.Close(in[j])
				unix.Close(out[j])
			}
			return 0, fmt.Errorf("contention: %w", err)
		}
		in[k], out[k] = p[0], p[1]
	}
	defer func() {
		for k := range n {
			unix.Close(in[k])
		}
	}()
	before, err := Steal(cpus)
	if err != nil {
		for k := range n {
			unix.Close(out[k])
		}
		return 0, err
	}
	start := time.Now()
	deadline := start.Add(span)
	errs := make(chan error, n)
	for k, c := range cpus {
		go func() {
			next := out[(k+1)%n]
			// Closing the next pipe ends the next thread, and so on round
			// the ring, whichever thread stops first.
			defer unix.Close(next)
			if err := pinThread(c); err != nil {
				errs <- fmt.Errorf("contention: %w", err)
				return
			}
			tok := []byte{0}
			if k == 0 {
				if _, err := unix.Write(next, tok); err != nil {
					errs <- fmt.Errorf("contention: %w", err)
					return
				}
			}
			for {
				if m, err := unix.Read(in[k], tok); m != 1 || err != nil {
					break
				}
				if k == 0 && (time.Now().After(deadline) || ctx.Err() != nil) {
					break
				}
				if _, err := unix.Write(next, tok); err != nil {
					break
				}
			}
			errs <- nil
		}()
	}
	for range cpus {
		if e := <-errs; e != nil && err == nil {
			err = e
		}
	}
	if err != nil {
		return 0, err
	}
	after, err := Steal(cpus)
	if err != nil {
		return 0, err
	}
	return (after - before).Seconds() / time.Since(start).Seconds() / float64(n), nil
}

// Steal is the hypervisor's steal time on the CPUs since boot, summed; its
// change over a span is what the hypervisor took of them in it.
func Steal(cpus []int) (time.Duration, error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, fmt.Errorf("contention: %w", err)
	}
	times, err := parseProcStat(b)
	if err != nil {
		return 0, fmt.Errorf("contention: %w", err)
	}
	var sum uint64
	for _, c := range cpus {
		sum += times[c].steal
	}
	return time.Duration(sum), nil
}
