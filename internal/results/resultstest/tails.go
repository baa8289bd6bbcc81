package resultstest

import (
	"fmt"
	"strconv"
	"time"

	"github.com/meshbench/meshbench/internal/infra"
	"github.com/meshbench/meshbench/internal/load"
	"github.com/meshbench/meshbench/internal/metrics"
	"github.com/meshbench/meshbench/internal/results"
)

// TailMesh is one mesh of a tails study (WriteTails): what each of its
// repetitions served and how many of its requests failed.
type TailMesh struct {
	Name, Profile string
	// Served are the served requests' latencies, each with how many
	// requests took it, in every repetition.
	Served map[time.Duration]int64
	// Failed is how many requests of each repetition failed (timed out):
	// counted as errors, not timed into the latency histogram, as the
	// load engine records them.
	Failed int64
	// QPS is the rate the repetition completed; 0 is 1,000.
	QPS float64
}

// TailStudy is a small study of meshes at one load configuration, for
// tests of tails and loops.
type TailStudy struct {
	Meshes []TailMesh
	// Reps is the number of interleaved rounds, each its own deployment
	// unless OneDeployment.
	Reps          int
	OneDeployment bool
	// Timeout is the cells' load.options.timeout.
	Timeout time.Duration
	// Rate, when set, makes the cells an open loop at that rate; else
	// they are a closed loop.
	Rate        float64
	Connections int
}

// WriteTails writes the study's results directory into dir.
func WriteTails(dir string, st TailStudy) (*results.Index, error) {
	ix := &results.Index{Schema: results.SchemaVersion, Study: "tails", Provenance: provenance(), Start: Start, Complete: true}
	now := Start
	conns := st.Connections
	if conns == 0 {
		conns = 32
	}
	for rep := 1; rep <= st.Reps; rep++ {
		for _, m := range st.Meshes {
			id := fmt.Sprintf("%04d-%s-%d", len(ix.Cells)+1, m.Name, rep)
			dep := rep
			if st.OneDeployment {
				dep = 1
			}
			s := results.Summary{ID: id, File: results.CellFile(id), Mesh: m.Name, Profile: m.Profile, Repetition: rep, Deployment: dep,
				Status: results.StatusOK, Params: map[string]string{"connections": strconv.Itoa(conns)}}
			o := load.Options{URL: "http://productpage.ns-1:9080/productpage", Method: "GET", Timeout: st.Timeout, Connections: conns, Rate: st.Rate}
			served := metrics.NewHistogram()
			var n int64
			for d, c := range m.Served {
				served.RecordN(d, c)
				n += c
			}
			requests := n + m.Failed
			qps := m.QPS
			if qps == 0 {
				qps = 1000
			}
			start := now
			now = now.Add(time.Duration(float64(requests) / qps * float64(time.Second)))
			r := load.Result{Options: o, Start: start, End: now, Requests: requests, Errors: m.Failed,
				StatusCodes: map[int]int64{200: n}, Latency: served, ByClass: map[string]*metrics.Histogram{"2xx": served},
				AchievedRate: qps}
			if m.Failed > 0 {
				r.ErrorKinds = map[string]int64{load.KindTimeout: m.Failed}
				failed := metrics.NewHistogram()
				failed.RecordN(st.Timeout, m.Failed)
				r.ByClass["error"] = failed
			}
			g := results.GeneratorOf(r)
			c := &results.Cell{Load: results.LoadOf(infra.LoadSpec{Path: infra.PathService, Options: o}), Merged: &g, Generators: []results.Generator{g}}
			s.Start, s.End, s.Requests, s.Errors = start, now, requests, m.Failed
			s.LatencyMs = results.LatencyOf(served)
			c.Summary = s
			if err := results.WriteCell(dir, c); err != nil {
				return nil, err
			}
			ix.Cells = append(ix.Cells, c.Summary)
		}
	}
	ix.End, ix.Planned = now, len(ix.Cells)
	if err := results.WriteJSON(dir, results.IndexFile, ix); err != nil {
		return nil, err
	}
	return ix, nil
}
