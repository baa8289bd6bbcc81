package load

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/meshbench/meshbench/internal/metrics"
)

// Report is the JSON document `meshbench load --output json` prints and
// --save writes: the summary figures at the top level, the encoded latency
// histogram, and the full Result, whose histograms merge exactly with other
// generators' (ReadResult reads it back).
type Report struct {
	Summary
	Histogram *metrics.Histogram `json:"histogram"`
	Result    *Result            `json:"result"`
}

// WriteJSON writes r's Report as indented JSON.
func WriteJSON(w io.Writer, r *Result) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(Report{Summary: Summarize(r), Histogram: r.Latency, Result: r}); err != nil {
		return fmt.Errorf("write result: %w", err)
	}
	return nil
}

// ReadResult reads a Report written by WriteJSON.
func ReadResult(rd io.Reader) (*Result, error) {
	var rep struct {
		Result *Result `json:"result"`
	}
	if err := json.NewDecoder(rd).Decode(&rep); err != nil {
		return nil, fmt.Errorf("read result: %w", err)
	}
	if rep.Result == nil || rep.Result.Latency == nil {
		return nil, errors.New("read result: no \"result\" with a latency histogram in it")
	}
	return rep.Result, nil
}

// WriteText writes r as a human report, in the spirit of vegeta's.
func WriteText(w io.Writer, r *Result) error {
	s := Summarize(r)
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	rate := fmt.Sprintf("%.2f", s.AchievedRate)
	if s.TargetRate > 0 {
		rate += fmt.Sprintf(" (target %g)", s.TargetRate)
	}
	fmt.Fprintf(tw, "Load\t[model, connections]\t%s, %d\n", loadModel(&r.Options), r.Options.Connections)
	fmt.Fprintf(tw, "Requests\t[total, rate, throughput]\t%d, %s, %.2f\n", s.Requests, rate, s.Throughput)
	fmt.Fprintf(tw, "Duration\t[measured]\t%s\n", dur(time.Duration(s.DurationS*float64(time.Second))))
	if r.Latency != nil {
		fmt.Fprintf(tw, "Latencies\t[min, mean, 50, 90, 95, 99, 99.9, max]\t%s\n", durs(r.Latency, true))
	}
	if r.Uncorrected != nil && r.Uncorrected.Count() > 0 {
		fmt.Fprintf(tw, "Uncorrected\t[min, mean, 50, 90, 95, 99, 99.9, max]\t%s\n", durs(r.Uncorrected, true))
	}
	if r.SendLag != nil && r.SendLag.Count() > 0 {
		fmt.Fprintf(tw, "Send lag\t[50, 99, max, late]\t%s, %s, %s, %d\n",
			dur(r.SendLag.Percentile(50)), dur(r.SendLag.Percentile(99)), dur(r.SendLag.Max()), r.LateSends)
	}
	fmt.Fprintf(tw, "Status Codes\t[code:count]\t%s\n", statusCodes(s.StatusCodes, s.Errors))
	fmt.Fprintf(tw, "Connections\t[opened, rate]\t%d, %.2f\n", s.NewConnections, s.NewConnectionRate)
	fmt.Fprintf(tw, "Client CPU\t[total, per request, use]\t%s, %.2fµs, %.1f%% of %d CPUs\n",
		dur(r.ClientCPU), s.ClientCPUPerRequestUS, 100*s.ClientCPUUtil, r.ClientCores)
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(s.ErrorKinds) > 0 {
		fmt.Fprintln(w, "Error Set:")
		for _, k := range slices.Sorted(maps.Keys(s.ErrorKinds)) {
			fmt.Fprintf(w, "  %s: %d\n", k, s.ErrorKinds[k])
		}
	}
	if len(s.Warnings) > 0 {
		fmt.Fprintln(w, "Warnings:")
		for _, m := range s.Warnings {
			fmt.Fprintf(w, "  %s\n", m)
		}
	}
	if s.Distorted {
		_, err := fmt.Fprintln(w, "DISTORTED: the generator shaped this result; do not publish it.")
		return err
	}
	return nil
}

func durs(h *metrics.Histogram, withMean bool) string {
	parts := []string{dur(h.Min())}
	if withMean {
		parts = append(parts, dur(h.Mean()))
	}
	for _, p := range []float64{50, 90, 95, 99, 99.9} {
		parts = append(parts, dur(h.Percentile(p)))
	}
	return strings.Join(append(parts, dur(h.Max())), ", ")
}

// dur prints a duration to microsecond precision, as the histograms hold.
func dur(d time.Duration) string { return d.Round(time.Microsecond).String() }

func statusCodes(codes map[int]int64, errs int64) string {
	var parts []string
	for _, c := range slices.Sorted(maps.Keys(codes)) {
		parts = append(parts, fmt.Sprintf("%d:%d", c, codes[c]))
	}
	if errs > 0 {
		parts = append(parts, fmt.Sprintf("error:%d", errs))
	}
	return strings.Join(parts, "  ")
}

// MergeFiles reads the results saved in files and merges them.
func MergeFiles(files ...string) (*Result, error) {
	total := &Result{}
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			return nil, err
		}
		r, err := ReadResult(f)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		total.Merge(r)
	}
	return total, nil
}
