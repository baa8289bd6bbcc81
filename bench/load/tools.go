package main

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

var toolNames = []string{"meshbench", "wrk", "hey", "oha", "fortio", "vegeta", "floor", "floor-uring"}

// tool is how to drive one load generator and read what it measured.
type tool struct {
	name string
	// binary names the flag that gives the tool's binary, when not name.
	binary string
	// closed returns the arguments and standard input of a closed-loop,
	// keep-alive run; tmp is a scratch directory.
	closed func(bin, url string, conns int, d time.Duration, tmp string) ([]string, string)
	// count reads the completed requests and the failed ones of a closed
	// run from its output.
	count func(bin string, p proc, tmp string) (done, failed int64, err error)
	// open returns the arguments of an open-loop run at rate; nil leaves
	// the tool out of the stall test.
	open func(url string, rate float64, conns int, d time.Duration) []string
	// p99 reads the 99th percentile latency of an open-loop run.
	p99 func(p proc) (time.Duration, error)
}

func secs(d time.Duration) string { return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + "s" }

// bin is the tool's binary; empty when missing.
func (t tool) bin(cfg config) string {
	if t.binary != "" {
		return cfg.tools[t.binary]
	}
	return cfg.tools[t.name]
}

// meshbenchCount reads a meshbench run's requests and errors from its
// JSON report.
func meshbenchCount(_ string, p proc, _ string) (int64, int64, error) {
	var r meshbenchReport
	if err := json.Unmarshal(p.stdout, &r); err != nil {
		return 0, 0, err
	}
	return r.Requests, r.Errors, nil
}

var tools = []tool{
	// meshbench as users run it, its progress line printed once a second
	// (to the pipe that runPinned reads).
	{
		name: "meshbench",
		closed: func(_, url string, conns int, d time.Duration, _ string) ([]string, string) {
			return []string{"load", "-c", fmt.Sprint(conns), "-d", secs(d), "--output", "json", url}, ""
		},
		count: meshbenchCount,
		open: func(url string, rate float64, conns int, d time.Duration) []string {
			return []string{"load", "-q", "--rate", fmt.Sprint(rate), "-c", fmt.Sprint(conns), "-d", secs(d), "--output", "json", url}
		},
		p99: func(p proc) (time.Duration, error) {
			var r meshbenchReport
			err := json.Unmarshal(p.stdout, &r)
			return ms(r.LatencyMS.P99), err
		},
	},
	{
		name:   "meshbench -q",
		binary: "meshbench",
		closed: func(_, url string, conns int, d time.Duration, _ string) ([]string, string) {
			return []string{"load", "-q", "-c", fmt.Sprint(conns), "-d", secs(d), "--output", "json", url}, ""
		},
		count: meshbenchCount,
	},
	{
		name: "wrk",
		closed: func(_, url string, conns int, d time.Duration, _ string) ([]string, string) {
			return []string{"-t1", fmt.Sprintf("-c%d", conns), "-d" + secs(d), url}, ""
		},
		count: func(_ string, p proc, _ string) (int64, int64, error) {
			done, err := match(p.stdout, `(\d+) requests in`)
			failed, _ := match(p.stdout, `Non-2xx or 3xx responses: (\d+)`)
			for _, kind := range []string{"connect", "read", "write", "timeout"} {
				n, _ := match(p.stdout, kind+` (\d+)`)
				failed += n
			}
			return done, failed, err
		},
	},
	{
		name: "hey",
		closed: func(_, url string, conns int, d time.Duration, _ string) ([]string, string) {
			return []string{"-z", secs(d), "-c", fmt.Sprint(conns), url}, ""
		},
		count: func(_ string, p proc, _ string) (int64, int64, error) {
			var done, failed int64
			for _, m := range regexp.MustCompile(`\[(\d{3})\]\s+(\d+) responses`).FindAllSubmatch(p.stdout, -1) {
				n, _ := strconv.ParseInt(string(m[2]), 10, 64)
				done += n
				if string(m[1]) != "200" {
					failed += n
				}
			}
			// Errors: "  [12]	Get "http://...": dial tcp ...".
			errs := sumMatches(p.stdout, `(?m)^\s+\[(\d+)\]\s+Get `)
			if done == 0 {
				return 0, 0, fmt.Errorf("no status codes in hey's output")
			}
			return done + errs, failed + errs, nil
		},
		open: func(url string, rate float64, conns int, d time.Duration) []string {
			return []string{"-z", secs(d), "-c", fmt.Sprint(conns), "-q", fmt.Sprint(rate / float64(conns)), url}
		},
		p99: func(p proc) (time.Duration, error) {
			m := regexp.MustCompile(`99% in ([\d.]+) secs`).FindSubmatch(p.stdout)
			if m == nil {
				return 0, fmt.Errorf("no p99 in hey's output")
			}
			v, err := strconv.ParseFloat(string(m[1]), 64)
			return time.Duration(v * float64(time.Second)), err
		},
	},
	{
		name: "oha",
		closed: func(_, url string, conns int, d time.Duration, _ string) ([]string, string) {
			return []string{"-z", secs(d), "-c", fmt.Sprint(conns), "--no-tui", "--output-format", "json", url}, ""
		},
		count: func(_ string, p proc, _ string) (int64, int64, error) {
			var r ohaReport
			if err := json.Unmarshal(p.stdout, &r); err != nil {
				return 0, 0, err
			}
			var done, failed int64
			for code, n := range r.StatusCodes {
				done += n
				if code != "200" {
					failed += n
				}
			}
			for _, n := range r.Errors {
				done += n
				failed += n
			}
			return done, failed, nil
		},
		open: func(url string, rate float64, conns int, d time.Duration) []string {
			return []string{"-z", secs(d), "-c", fmt.Sprint(conns), "-q", fmt.Sprint(rate), "--no-tui", "--output-format", "json", url}
		},
		p99: func(p proc) (time.Duration, error) {
			var r ohaReport
			err := json.Unmarshal(p.stdout, &r)
			return time.Duration(r.Percentiles["p99"] * float64(time.Second)), err
		},
	},
	{
		name: "fortio",
		closed: func(_, url string, conns int, d time.Duration, _ string) ([]string, string) {
			return []string{"load", "-quiet", "-qps", "0", "-c", fmt.Sprint(conns), "-t", secs(d), "-json", "-", url}, ""
		},
		count: func(_ string, p proc, _ string) (int64, int64, error) {
			var r fortioReport
			if err := json.Unmarshal(p.stdout, &r); err != nil {
				return 0, 0, err
			}
			var failed int64
			for code, n := range r.RetCodes {
				if code != "200" {
					failed += n
				}
			}
			return r.DurationHistogram.Count, failed, nil
		},
		open: func(url string, rate float64, conns int, d time.Duration) []string {
			return []string{"load", "-quiet", "-qps", fmt.Sprint(rate), "-c", fmt.Sprint(conns), "-t", secs(d), "-p", "50,99", "-json", "-", url}
		},
		p99: func(p proc) (time.Duration, error) {
			var r fortioReport
			if err := json.Unmarshal(p.stdout, &r); err != nil {
				return 0, err
			}
			for _, pc := range r.DurationHistogram.Percentiles {
				if pc.Percentile == 99 {
					return time.Duration(pc.Value * float64(time.Second)), nil
				}
			}
			return 0, fmt.Errorf("no p99 in fortio's output")
		},
	},
	{
		name: "vegeta",
		closed: func(_, url string, conns int, d time.Duration, tmp string) ([]string, string) {
			return []string{"attack", "-rate", "0", "-workers", fmt.Sprint(conns), "-max-workers", fmt.Sprint(conns),
				"-duration", secs(d), "-output", filepath.Join(tmp, "vegeta.bin")}, "GET " + url + "\n"
		},
		count: func(bin string, _ proc, tmp string) (int64, int64, error) {
			out, err := exec.Command(bin, "report", "-type", "json", filepath.Join(tmp, "vegeta.bin")).Output()
			if err != nil {
				return 0, 0, fmt.Errorf("vegeta report: %w", err)
			}
			var r struct {
				Requests    int64            `json:"requests"`
				StatusCodes map[string]int64 `json:"status_codes"`
			}
			if err := json.Unmarshal(out, &r); err != nil {
				return 0, 0, err
			}
			return r.Requests, r.Requests - r.StatusCodes["200"], nil
		},
	},
	// Not peers: bench/load/floor, the least a keep-alive client can cost
	// here (the kernel's TCP and wake-up work, and nothing more), waiting
	// with epoll and with io_uring.
	floorTool("floor", "epoll"),
	floorTool("floor-uring", "uring"),
}

func floorTool(name, io string) tool {
	return tool{
		name: name,
		closed: func(_, url string, conns int, d time.Duration, _ string) ([]string, string) {
			return []string{"-io", io, "-c", fmt.Sprint(conns), "-d", secs(d), url}, ""
		},
		count: func(_ string, p proc, _ string) (int64, int64, error) {
			done, err := match(p.stdout, `(\d+) requests`)
			return done, 0, err
		},
	}
}

type meshbenchReport struct {
	Requests      int64    `json:"requests"`
	Errors        int64    `json:"errors"`
	DurationS     float64  `json:"duration_s"`
	AchievedRate  float64  `json:"achieved_rate"`
	LatencyMS     latency  `json:"latency_ms"`
	UncorrectedMS latency  `json:"uncorrected_latency_ms"`
	SendLagMS     latency  `json:"send_lag_ms"`
	LateSends     int64    `json:"late_sends"`
	ClientCPUS    float64  `json:"client_cpu_s"`
	Distorted     bool     `json:"distorted"`
	Warnings      []string `json:"warnings"`
}

type latency struct {
	P50 float64 `json:"p50"`
	P99 float64 `json:"p99"`
	Max float64 `json:"max"`
}

type ohaReport struct {
	StatusCodes map[string]int64   `json:"statusCodeDistribution"`
	Errors      map[string]int64   `json:"errorDistribution"`
	Percentiles map[string]float64 `json:"latencyPercentiles"`
}

type fortioReport struct {
	RetCodes          map[string]int64 `json:"RetCodes"`
	DurationHistogram struct {
		Count       int64 `json:"Count"`
		Percentiles []struct {
			Percentile float64 `json:"Percentile"`
			Value      float64 `json:"Value"`
		} `json:"Percentiles"`
	} `json:"DurationHistogram"`
}

func ms(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }

func match(b []byte, re string) (int64, error) {
	m := regexp.MustCompile(re).FindSubmatch(b)
	if m == nil {
		return 0, fmt.Errorf("no %q in the output", re)
	}
	return strconv.ParseInt(string(m[1]), 10, 64)
}

func sumMatches(b []byte, re string) int64 {
	var sum int64
	for _, m := range regexp.MustCompile(re).FindAllSubmatch(b, -1) {
		n, _ := strconv.ParseInt(strings.TrimSpace(string(m[1])), 10, 64)
		sum += n
	}
	return sum
}
