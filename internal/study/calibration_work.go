package study

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/meshbench/meshbench/internal/results"
	"github.com/meshbench/meshbench/internal/topology"
)

// Calibrating the app's cost (scaling.calibrate_work). A closed loop at
// saturation measures cost per request: a study whose app saturated its
// node published, in effect, what its proxies cost relative to its app
// (LiveWyer's bookinfo: 143.8 QPS without a mesh, 124.5 with sidecars, so
// the sidecars cost 15.5% of the app per request). The lab's test service
// costs far less than a real app on this machine's CPU, so there the
// proxies would dominate. The study's figures give each service's work in
// proportion (workload.cpu_work); what they cannot give is this machine's
// speed relative to the study's. The proxies are the yardstick both share:
// the capacities calibration measures give the lab's proxies' cost per
// request, and the app's work is scaled by one factor so that the app
// costs, relative to them, what the study's cost relative to its own.
// With more than one mesh the target is the geometric mean of what each
// mesh's share asks for: one app cost can match every share only if the
// lab's proxies cost what the study's did relative to each other, and the
// report shows how far they do not.

// studyShares are the published shares of each mesh's proxies in the
// study's cost per request, from the published throughput ("qps") of the
// baseline and the mesh at the calibration configuration (params).
func (s *Study) studyShares(params map[string]string) (map[string]float64, error) {
	qps := map[string]float64{}
	for _, p := range s.Published {
		if p.Metric == "qps" && p.Value > 0 && paramsWithin(p.Params, params) {
			qps[p.Mesh] = p.Value
		}
	}
	var base string
	for _, m := range s.Meshes {
		if m.Profile == BaselineProfile && qps[m.Name] > 0 {
			base = m.Name
			break
		}
	}
	if base == "" {
		return nil, fmt.Errorf("scaling.calibrate_work: no published qps of a baseline mesh at %s", paramsDesc(params))
	}
	shares := map[string]float64{}
	for _, m := range s.Meshes {
		if q := qps[m.Name]; m.Name != base && q > 0 {
			shares[m.Name] = qps[base]/q - 1
		}
	}
	if len(shares) == 0 {
		return nil, fmt.Errorf("scaling.calibrate_work: no published qps of a mesh beside the baseline at %s", paramsDesc(params))
	}
	return shares, nil
}

// paramsWithin says every parameter of p has the value params gives it.
func paramsWithin(p, params map[string]string) bool {
	for k, v := range p {
		if params[k] != v {
			return false
		}
	}
	return true
}

func paramsDesc(p map[string]string) string {
	if len(p) == 0 {
		return "the study's configuration"
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(p)) {
		parts = append(parts, k+"="+p[k])
	}
	return strings.Join(parts, ", ")
}

// labShares are the shares of each mesh's proxies in the app's cost per
// request here, from measured capacities: capacity(baseline)/capacity(mesh)
// - 1, for the meshes the study published a share of.
func labShares(caps map[string]float64, base string, meshes map[string]float64) map[string]float64 {
	out := map[string]float64{}
	for m := range meshes {
		if caps[m] > 0 && caps[base] > 0 {
			out[m] = round4(caps[base]/caps[m] - 1)
		}
	}
	return out
}

// calibrateWork works out the factor for every service's work from the
// capacities measured with the configured work: the app then costs
// appCPUs/capacity(baseline) per request, of which configured is the
// configured work; each mesh asks for the app cost that makes its lab
// share equal the study's, and the target is their geometric mean.
func calibrateWork(study, caps map[string]float64, base string, appCPUs int, configured time.Duration) (*results.WorkCalibration, error) {
	if caps[base] <= 0 {
		return nil, fmt.Errorf("scaling.calibrate_work: the baseline's capacity was not measured")
	}
	if configured <= 0 {
		return nil, fmt.Errorf("scaling.calibrate_work: the workload burns no CPU per request; give workload.cpu_work the study's split between services")
	}
	w := &results.WorkCalibration{
		AppCPUs: appCPUs, StudyShares: map[string]float64{}, ConfiguredMs: ms(configured),
		CapacitiesBefore: map[string]float64{}, SharesBefore: labShares(caps, base, study),
	}
	for m, c := range caps {
		w.CapacitiesBefore[m] = math.Round(c*10) / 10
	}
	app := float64(appCPUs) / caps[base] // CPU seconds per request
	w.AppMsBefore = round4(app * 1000)
	logSum, n := 0.0, 0
	for _, m := range slices.Sorted(maps.Keys(study)) {
		w.StudyShares[m] = round4(study[m])
		lab, ok := w.SharesBefore[m]
		if !ok || lab <= 0 || study[m] <= 0 {
			continue
		}
		logSum += math.Log(app * lab / study[m])
		n++
	}
	if n == 0 {
		return nil, fmt.Errorf("scaling.calibrate_work: no mesh with a published share cost anything measurable here (capacities %s)", capacitiesText(caps))
	}
	target := math.Exp(logSum / float64(n))
	w.TargetAppMs = round4(target * 1000)
	// The app's own cost (the test service, the kernel's share) stays; the
	// configured work makes up the difference.
	work := configured.Seconds() + target - app
	if work <= 0 {
		return nil, fmt.Errorf("scaling.calibrate_work: the app here costs %.1f ms per request without any configured work, more than the %.1f ms the study's shares ask for; lower workload.cpu_work", (app-configured.Seconds())*1000, target*1000)
	}
	w.Scale = round4(work / configured.Seconds())
	return w, nil
}

// withWork returns the study with every service's (and version's) work
// scaled by f, to the microsecond, and each service's new work in ms. s
// and its graph are left as they are: calibration makes a new study to
// plan, rather than editing the one it was given.
func (s *Study) withWork(f float64) (*Study, map[string]float64) {
	scale := func(d topology.Duration) topology.Duration {
		return topology.Duration(time.Duration(math.Round(float64(d)*f/1e3)) * time.Microsecond)
	}
	g := *s.Graph
	g.Services = slices.Clone(s.Graph.Services)
	out := map[string]float64{}
	for i := range g.Services {
		svc := &g.Services[i]
		svc.CPUWork = scale(svc.CPUWork)
		svc.Versions = slices.Clone(svc.Versions)
		for j := range svc.Versions {
			svc.Versions[j].CPUWork = scale(svc.Versions[j].CPUWork)
		}
		if svc.CPUWork > 0 {
			out[svc.Name] = ms(svc.CPUWork.D())
		}
	}
	c := *s
	c.Graph = &g
	return &c, out
}

// workPerRequest is the CPU the graph's configured work burns for one
// request to its entry: each service's work, averaged over its versions
// by replicas (the Service balances over every replica), plus what its
// calls cost times how often it makes them.
func workPerRequest(g *topology.Graph, replicas map[string]int) time.Duration {
	var cost func(name string, depth int) float64
	cost = func(name string, depth int) float64 {
		svc := g.Service(name)
		if svc == nil || depth > len(g.Services) {
			return 0
		}
		type variant struct {
			work   topology.Duration
			script []topology.Step
			weight float64
		}
		var vs []variant
		if len(svc.Versions) == 0 {
			vs = append(vs, variant{svc.CPUWork, svc.Script, 1})
		}
		for _, v := range svc.Versions {
			work, script, weight := svc.CPUWork, svc.Script, float64(max(1, svc.Replicas))
			if v.CPUWork > 0 {
				work = v.CPUWork
			}
			if len(v.Script) > 0 {
				script = v.Script
			}
			if v.Replicas > 0 {
				weight = float64(v.Replicas)
			}
			if _, ok := replicas[name]; ok {
				weight = 1 // an override gives every version the same count
			}
			vs = append(vs, variant{work, script, weight})
		}
		var total, weights float64
		for _, v := range vs {
			c := v.work.D().Seconds()
			for _, st := range v.script {
				for _, call := range st.Calls() {
					n, p := float64(max(1, call.Count)), call.Probability
					if p == 0 {
						p = 1
					}
					c += n * p * cost(call.Service, depth+1)
				}
			}
			total += v.weight * c
			weights += v.weight
		}
		return total / weights
	}
	return time.Duration(math.Round(cost(g.Entry, 0) * 1e9))
}

func ms(d time.Duration) float64 { return round4(d.Seconds() * 1000) }

func round4(x float64) float64 { return math.Round(x*1e4) / 1e4 }

// workNote says in a sentence what the calibration did.
func workNote(w *results.WorkCalibration) string {
	var parts []string
	for _, m := range slices.Sorted(maps.Keys(w.StudyShares)) {
		parts = append(parts, fmt.Sprintf("%s %.1f%% (study %.1f%%)", m, 100*w.SharesBefore[m], 100*w.StudyShares[m]))
	}
	return fmt.Sprintf("app's cost calibrated: with the configured work (%.1f ms per request) the app cost %.1f ms of CPU per request and the proxies %s of it; every service's work scaled by %.3g, so that the app costs about %.1f ms",
		w.ConfiguredMs, w.AppMsBefore, strings.Join(parts, ", "), w.Scale, w.TargetAppMs)
}
