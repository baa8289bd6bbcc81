package report

import (
	"fmt"
	"maps"
	"slices"

	"github.com/meshbench/meshbench/internal/results"
)

// glossary defines the words the report uses that a platform engineer
// may not share with it.
func (b *builder) glossary() Section {
	terms := [][2]string{
		{"Cell", "one measurement: one mesh, one load configuration, one repetition, from install and verification to the measured phase."},
		{"Round", "one repetition of every mesh at every load configuration; the meshes' cells are interleaved within a round in a shuffled order, so that drift of the machine does not pass for a mesh difference."},
		{"Open loop", "load offered at a fixed rate whatever the answers' latency, as users arrive; latency is measured from when a request was due, so a stalled server shows as latency. A closed loop sends the next request when the last one answers, and so hides a stall."},
		{"Closed-loop capacity", "the requests a second a fixed number of connections complete back to back with no latency limit: how fast a mesh goes flat out, not what it sustains at an acceptable latency."},
		{"Capacity at the SLO", "the highest open-loop rate at which a mesh meets a service-level objective (a p99 limit and an error rate), found by search."},
		{"HDR", "High Dynamic Range histogram: every request's latency kept to three significant digits, so that any percentile can be read afterwards and runs can be merged."},
		{"SMP", "Service Mesh Performance, the CNCF format Meshery reads; meshbench report --smp exports to it."},
		{"Tenant", "one namespace with its own copy of the application and its own load generator, as in the 50-tenant study."},
		{"Calibration", "a short closed-loop measurement of each mesh before the cells, to scale the study's load to the machine: the open-loop rate is set to a fraction of the slowest mesh's capacity."},
		{"Data plane", "the proxies that carry requests: sidecars, node proxies and waypoints. Not the application, the ingress gateway, the control plane or the load generators."},
		{"Node proxy (ztunnel)", "Istio ambient's per-node L4 proxy, written in Rust; the lab stands an Envoy in its role."},
		{"Waypoint", "an Envoy per namespace (or service) that ambient mode sends traffic through for L7 features: HTTP routing, retries, L7 policy."},
		{"HBONE", "HTTP-Based Overlay Network Environment: ambient's tunnel, mutual TLS carrying HTTP/2 CONNECT streams on port 15008 between node proxies and waypoints."},
		{"USD per million requests", usdPerMillionTerm},
		{"Proxy pass", "one request's passage through one data-plane proxy: a call between two pods under sidecars passes two (the caller's and the callee's), under ambient two node-proxy passes, plus one through a waypoint. CPU per proxy pass per 1,000 req/s is the unit Istio publishes its proxies' CPU in."},
		{"Interval", "the distribution-free 95% interval of a median over the units (the independent deployments) or of a difference paired by round, or the level the design reaches after it where that is below 95%; a difference whose interval includes zero, or that cannot reach 95%, is no measurable difference."},
	}
	var items []string
	for _, t := range terms {
		items = append(items, t[0]+": "+t[1])
	}
	return Section{ID: "glossary", Title: "Glossary", Blocks: []Block{{List: items}}}
}

// reproduce gives the commands that rerun the study and regenerate this
// report, and the versions the results were made with.
func (b *builder) reproduce() Section {
	ix := b.d.Index
	pv := ix.Provenance
	// RESULTS stands for this directory, wherever the reader keeps it, so
	// that the report does not depend on where it was generated.
	const dir = "RESULTS"
	run := "meshbench run " + dir + "/" + results.StudyFile + " --out " + dir + "-again"
	if b.d.StudyFile == nil {
		run = "meshbench run --study " + ix.Study + " --out " + dir + "-again"
	}
	if sc := pv.Scaling; sc != nil && sc.Mode == "factor" && sc.Factor > 0 {
		run += fmt.Sprintf(" --scale %g", sc.Factor)
	}
	if pv.Platform.Name != "" {
		run += " --platform " + pv.Platform.Name
	}
	code := run + "\nmeshbench report " + dir + "-again"
	versions := []string{"meshbench " + orUnknown(pv.MeshbenchVersion) + " (meshbench version prints yours), built with " + orUnknown(pv.GoVersion)}
	if v := pv.Platform.EnvoyVersion; v != "" {
		versions = append(versions, "Envoy "+v)
	}
	for _, k := range slices.Sorted(maps.Keys(pv.Platform.Versions)) {
		versions = append(versions, k+" "+pv.Platform.Versions[k])
	}
	return Section{ID: "reproduce", Title: "Reproduce", Blocks: []Block{
		text("RESULTS is this results directory. The study file this run used is kept in it as " + results.StudyFile + "; these commands run it again into a new directory and write its report. " +
			"\"meshbench report RESULTS\" regenerates this report, figure for figure, from the raw results."),
		{Code: code},
		heading("Versions"),
		{List: versions},
	}}
}
