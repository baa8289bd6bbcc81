package load

import (
	"fmt"
	"strings"
	"syscall"
	"time"
)

// The generator watches itself: its CPU time, and whether it kept to the
// schedule. A result it distorted says so.

// processCPU is the CPU time, user and system, that this process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// achievedRate is the send rate of the measured phase; see
// Result.AchievedRate.
func achievedRate(res *Result, s *schedule, lastIntended, lastSend, end time.Duration) float64 {
	if res.Requests == 0 {
		return 0
	}
	span := end - s.measured()
	gap := time.Duration(0)
	if s.open {
		gap = time.Duration(float64(time.Second) / s.pacer.Rate)
		span = lastSend - s.measured() + gap
	}
	if span <= 0 {
		return 0
	}
	if s.poisson {
		// The rate times the schedule's span over the sends': a Poisson
		// schedule's own count in the phase varies by 1/sqrt(n), which
		// is the arrival process, not a shortfall of the generator's.
		return s.pacer.Rate * float64(lastIntended-s.measured()+gap) / float64(span)
	}
	return float64(res.Requests) / span.Seconds()
}

// saturated is the share of its CPUs above which the generator is taken to
// be the bottleneck.
const saturated = 0.9

// CPUSaturated reports the share of its CPUs the generator used over the
// measured phase, and whether that was enough to make the generator, not
// the server, the bottleneck.
func (r *Result) CPUSaturated() (float64, bool) {
	wall := r.End.Sub(r.Start)
	if wall <= 0 || r.ClientCores <= 0 {
		return 0, false
	}
	util := r.ClientCPU.Seconds() / (wall.Seconds() * float64(r.ClientCores))
	return util, util > saturated
}

// OwnLimit says whether requests failed on the generator's own limits
// (KindNoPort, KindNoFiles) rather than the server's, and how many: such
// a result measures the generator, and a connection search that took
// these failures for the server's would put the system's ceiling at the
// generator's.
func (r *Result) OwnLimit() (string, bool) {
	var why []string
	if n := r.Unopened[KindNoPort]; n > 0 {
		why = append(why, fmt.Sprintf("%d of its %d connections found no free local port before the clock (EADDRNOTAVAIL): it held fewer than asked", n, r.Options.Connections))
	}
	if n := r.Unopened[KindNoFiles]; n > 0 {
		why = append(why, fmt.Sprintf("%d of its %d connections could not be opened before the clock for want of descriptors (EMFILE or ENFILE, RLIMIT_NOFILE): it held fewer than asked", n, r.Options.Connections))
	}
	if n := r.ErrorKinds[KindNoPort]; n > 0 {
		why = append(why, fmt.Sprintf("%d requests found no free local port (EADDRNOTAVAIL): the generator's address had used up its ephemeral ports to the target (net.ipv4.ip_local_port_range, and TIME_WAIT unless net.ipv4.tcp_tw_reuse is 1)", n))
	}
	if n := r.ErrorKinds[KindNoFiles]; n > 0 {
		why = append(why, fmt.Sprintf("%d requests could not open a socket (EMFILE or ENFILE): the generator ran out of file descriptors (RLIMIT_NOFILE)", n))
	}
	if len(why) == 0 {
		return "", false
	}
	return strings.Join(why, "; ") + "; the generator's limit, not the server's", true
}

// assess says whether the generator shaped the result: it used (nearly) all
// its CPU, could not send at the rate asked, or ran out of ports or
// descriptors.
func (r *Result) assess() {
	if why, own := r.OwnLimit(); own {
		r.Distorted = true
		r.Warnings = append(r.Warnings, why)
	}
	if util, full := r.CPUSaturated(); full {
		r.Distorted = true
		r.Warnings = append(r.Warnings, fmt.Sprintf(
			"generator CPU saturated: %.0f%% of %d CPUs; the generator, not the server, may have set these figures",
			100*util, r.ClientCores))
	}
	if rate := r.Options.Rate; rate > 0 && r.Requests > 0 && r.AchievedRate < 0.99*rate {
		r.Distorted = true
		r.Warnings = append(r.Warnings, fmt.Sprintf(
			"achieved rate %.1f/s is %.1f%% short of the target %g/s: every connection was busy (add --connections) or the generator was saturated",
			r.AchievedRate, 100*(1-r.AchievedRate/rate), rate))
	}
}
