package load

import (
	"fmt"
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
func achievedRate(res *Result, s *schedule, lastSend, end time.Duration) float64 {
	if res.Requests == 0 {
		return 0
	}
	span := end - s.measure
	if s.open {
		span = lastSend - s.measure + time.Duration(float64(time.Second)/s.pacer.Rate)
	}
	if span <= 0 {
		return 0
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

// assess says whether the generator shaped the result: it used (nearly) all
// its CPU, or could not send at the rate asked.
func (r *Result) assess() {
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
