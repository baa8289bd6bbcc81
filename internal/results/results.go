package results

import (
	"strings"
	"time"

	"github.com/meshbench/meshbench/internal/infra"
	"github.com/meshbench/meshbench/internal/mesh"
	"github.com/meshbench/meshbench/internal/metrics"
	"github.com/meshbench/meshbench/internal/search"
)

// SchemaVersion is the version of the results format written here; what
// each version added, all of it optional, is listed in docs/results.md.
const SchemaVersion = 19

// LabWorkingSetSchema is the first version whose lab memory working set
// counts user pages alike on cgroup v1 and v2 (docs/results.md); before
// it the lab counted cAdvisor's usage less inactive file pages.
const LabWorkingSetSchema = 17

// OldestSchema is the oldest version ReadIndex reads: older versions
// only lack fields, so they are read as they are; their cell files go
// unchecked where unhashed.
const OldestSchema = 1

// Cell statuses.
const (
	StatusOK        = "ok"
	StatusDistorted = "distorted" // a generator saturated or fell short of its rate
	StatusFailed    = "failed"    // install, verification or measurement failed
)

// Index is study.json: what was run, on what, and one summary per cell in
// the order the cells ran.
type Index struct {
	Schema     int        `json:"schema"`
	Study      string     `json:"study"`
	StudyHash  string     `json:"study_sha256"`
	Provenance Provenance `json:"provenance"`
	Start      time.Time  `json:"start"`
	End        time.Time  `json:"end,omitzero"`
	// Complete is false while the run is going on or after an interrupt;
	// a resumed run continues from the cells already here.
	Complete bool `json:"complete"`
	// Seed shuffled the mesh order within each round; with the study file
	// it reproduces the order the cells were planned in.
	Seed uint64 `json:"seed"`
	// Planned is the number of cells the whole study has; Cells holds the
	// finished ones, in the order they ran.
	Planned int `json:"planned_cells"`
	// Resumed lists when the run was resumed after an interrupt.
	Resumed []time.Time `json:"resumed,omitempty"`
	// Capacity holds, for a study with a search section, each mesh's
	// capacity at the SLO; its trials' cell files are not in Cells.
	Capacity []Capacity `json:"capacity,omitempty"`
	// Rounds says how many interleaved rounds of repetitions ran and why
	// no more did.
	Rounds *Rounds `json:"rounds,omitempty"`
	// Noise is the host-noise guard the run applied; nil when the
	// platform does not measure host noise.
	Noise *NoiseGuard `json:"noise,omitempty"`
	Cells []Summary   `json:"cells"`
}

// Rounds is the repetitions a run planned and ran. A fixed count runs
// Min rounds; a planned one (Max above Min) runs Min rounds as its pilot,
// then plans the total from the pilot's spread (Planned, at most Max) so
// that every mesh's p50 overhead would have a 95% interval within CI of
// itself, and runs exactly that many: it never looks at the intervals
// again, which would be optional stopping.
type Rounds struct {
	Min int     `json:"min"`
	Max int     `json:"max"`
	CI  float64 `json:"ci,omitempty"`
	// Planned is the total the pilot planned (schema 17); 0 for a fixed
	// count.
	Planned int `json:"planned,omitempty"`
	Ran     int `json:"ran"`
	// Deployments is how many independent deployments the rounds spanned
	// (schema 17; older results ran one).
	Deployments int `json:"deployments,omitempty"`
	// Stop says how the count was decided: fixed, planned (from the
	// pilot), or before schema 17 narrow and max (adaptive stopping).
	Stop string `json:"stop"`
}

// Deployment is one independent deployment of a study: the platform
// brought up afresh, the workload deployed, and where the study
// calibrates, its own calibration, whose scaling its cells ran at.
type Deployment struct {
	Index   int       `json:"index"`
	Start   time.Time `json:"start"`
	Scaling *Scaling  `json:"scaling,omitempty"`
}

// NoiseGuard is the host-noise rule a run applied: a cell whose host noise
// was above Threshold cores is noisy and is run again, up to Retries more
// times, at the end of the study.
type NoiseGuard struct {
	Threshold float64 `json:"threshold_cores"`
	Retries   int     `json:"retries"`
	// Calibration is the host noise during each mesh's calibration, by
	// mesh name, in cores.
	Calibration map[string]float64 `json:"calibration,omitempty"`
}

// Provenance is everything recorded about how the results were made.
type Provenance struct {
	MeshbenchVersion string `json:"meshbench_version"`
	// MeshbenchCommit is the commit meshbench was built from, where the
	// build recorded it.
	MeshbenchCommit string            `json:"meshbench_commit,omitempty"`
	GoVersion       string            `json:"go_version"`
	Platform        infra.Info        `json:"platform"`
	Cluster         infra.ClusterSpec `json:"cluster"`
	// EnvoyConfigHashes maps a mesh (by its name in the study) to the hash
	// of the configuration its latest installation ran, as a check's
	// ConfigHash reports it (the lab: every Envoy bootstrap; Kubernetes:
	// the charts, values, images and nodes of the install); each cell's
	// verification keeps its own.
	EnvoyConfigHashes map[string]string `json:"envoy_config_hashes,omitempty"`
	// EnvoyVersions maps a lab mesh (by its name in the study) to the
	// Envoy release its latest installation ran (mesh.FactEnvoyVersion);
	// each cell's verification records its own.
	EnvoyVersions map[string]string `json:"envoy_versions,omitempty"`
	// Scaling is the first deployment's scaling (every deployment's
	// before schema 17).
	Scaling *Scaling `json:"scaling,omitempty"`
	// Deployments are the study's independent deployments, in the order
	// they ran, each with its own scaling (schema 17; older results ran
	// one, at Scaling).
	Deployments []Deployment `json:"deployments,omitempty"`
	// Published holds the figures the study's authors published, as the
	// study file carries them, for the report to set beside this run's.
	Published []Published `json:"published,omitempty"`
}

// Published is one figure a study's authors published, with where it
// comes from. Metric is a measured metric (p50, p95, qps, cpu:<part> in
// cores, mem:<part> in MiB), alone or prefixed by a relation to the mesh
// Against (default the baseline): "added:" the difference, "ratio:" the
// quotient, "reduction:" how many percent less. Params selects the cells
// it compares with.
type Published struct {
	Metric  string            `json:"metric"`
	Mesh    string            `json:"mesh"`
	Against string            `json:"against,omitempty"`
	Params  map[string]string `json:"params,omitempty"`
	Value   float64           `json:"value"`
	Source  string            `json:"source"`
}

// Scaling says how a preset's load was scaled to fit the platform.
type Scaling struct {
	Mode             string  `json:"mode"`                            // ScaleCalibrated, ScaleFactor, ScaleTenants or ScaleNone
	BaselineCapacity float64 `json:"baseline_capacity_rps,omitempty"` // measured baseline capacity
	// Capacities holds every calibrated mesh's measured capacity, by mesh
	// name; Reference names the one the fraction applies to: the slowest,
	// so that every mesh runs below saturation.
	Capacities    map[string]float64 `json:"capacities_rps,omitempty"`
	Reference     string             `json:"reference,omitempty"`
	Fraction      float64            `json:"fraction,omitempty"` // of the reference's capacity loaded at
	Factor        float64            `json:"factor"`             // lab rate / published rate
	PublishedRate float64            `json:"published_rate_rps,omitempty"`
	Rate          float64            `json:"rate_rps,omitempty"`
	Note          string             `json:"note,omitempty"`
	// Tenants, in mode "tenants", are the loaded-tenant counts measured,
	// out of StudyTenants; TenantRate is each loaded tenant's offered rate
	// (PublishedRate is the study's per-tenant rate), and RateLowered says
	// that the study's rate would have overloaded the lab. Deployed is
	// "loaded" when only the loaded tenants were deployed, "all" when every
	// tenant was.
	Tenants      []int   `json:"tenants,omitempty"`
	StudyTenants int     `json:"study_tenants,omitempty"`
	TenantRate   float64 `json:"tenant_rate_rps,omitempty"`
	RateLowered  bool    `json:"rate_lowered,omitempty"`
	Deployed     string  `json:"deployed,omitempty"`
	// Work, when the study calibrates its app's cost, records how the
	// workload's per-request CPU work was set; Capacities are then the
	// ones measured with that work.
	Work *WorkCalibration `json:"work,omitempty"`
}

// WorkCalibration records how a study's per-request CPU work was set so
// that, on this machine, its app costs what the study's app cost relative
// to its proxies. A mesh's share is what its proxies cost per request over
// what the app costs without them, read off closed-loop capacities at
// saturation as capacity(baseline)/capacity(mesh) - 1; the study's from
// its published throughput the same way.
type WorkCalibration struct {
	// AppCPUs is the app node's CPU count, which turns a capacity into CPU
	// time per request.
	AppCPUs int `json:"app_cpus"`
	// StudyShares are the published shares, by mesh.
	StudyShares map[string]float64 `json:"study_shares"`
	// ConfiguredMs is the CPU the configured work burns per request to the
	// entry (each service's work times its calls per request), before.
	ConfiguredMs float64 `json:"configured_ms"`
	// CapacitiesBefore were measured with the configured work, and
	// SharesBefore are the shares they give.
	CapacitiesBefore map[string]float64 `json:"capacities_before_rps"`
	SharesBefore     map[string]float64 `json:"shares_before"`
	// AppMsBefore is the app's whole per-request CPU then (the baseline's
	// CPUs over its capacity); TargetAppMs is what gives the study's
	// shares, the geometric mean of what each mesh's share asks for.
	AppMsBefore float64 `json:"app_ms_before"`
	TargetAppMs float64 `json:"target_app_ms"`
	// Scale multiplied every service's work, giving WorkMs per service.
	Scale  float64            `json:"scale"`
	WorkMs map[string]float64 `json:"work_ms"`
	// SharesAfter are the shares the capacities measured with the new work
	// give.
	SharesAfter map[string]float64 `json:"shares_after,omitempty"`
}

// Summary is one cell's line in study.json.
type Summary struct {
	ID   string `json:"id"`
	File string `json:"file"` // relative to the results directory
	// Mesh is the mesh's name in the study, unique there; Profile is the
	// mesh profile it installs (several names can share a profile).
	Mesh    string `json:"mesh"`
	Profile string `json:"profile"`
	// Params holds the cell's sweep values by parameter name, such as
	// "connections": "64" or "replicas.productpage": "4".
	Params     map[string]string `json:"params"`
	Repetition int               `json:"repetition"`
	// Deployment numbers, from 1, the independent deployment the cell ran
	// in (Provenance.Deployments); 0 in results before schema 17, which
	// ran one.
	Deployment   int          `json:"deployment,omitempty"`
	Status       string       `json:"status"`
	Reason       string       `json:"reason,omitempty"`
	Verification []mesh.Check `json:"verification"`
	LatencyMs    Latency      `json:"latency_ms"`
	// NamespaceLatencyMs, with a generator per namespace, is the mean over
	// the generators of each one's own percentiles, as the 50-tenant study
	// averaged per namespace; LatencyMs pools every request.
	NamespaceLatencyMs *Latency  `json:"namespace_latency_ms,omitempty"`
	AchievedRate       float64   `json:"achieved_rate"`
	Requests           int64     `json:"requests"`
	Errors             int64     `json:"errors"`
	Start              time.Time `json:"start"`
	End                time.Time `json:"end"`
	// HostNoise is the CPU, in cores, that anything outside the study used
	// on the study's CPUs during the measurement (infra.HostCPU.Noise);
	// nil where the platform does not measure it.
	HostNoise *float64 `json:"host_noise,omitempty"`
	// HostSlowdown is how much slower the study's CPUs ran a fixed piece
	// of work around the measurement than at their fastest in the run
	// (infra.HostCPU.Slowdown).
	HostSlowdown float64 `json:"host_slowdown,omitempty"`
	// Noisy says HostNoise was above the study's threshold, or
	// HostSlowdown above SlowdownLimit: the cell's figures may be another
	// workload's, and reports leave it out.
	Noisy bool `json:"noisy,omitempty"`
	// Attempt counts the cell's runs from 1: a noisy cell is run again at
	// the end of the study, and the index's figures are those of its
	// preferred attempt (PreferredAttempt), this one.
	Attempt int `json:"attempt,omitempty"`
	// Attempts are the cell's other attempts, in the order they ran, each
	// with its own file, which is kept (in study.json only).
	Attempts []Attempt `json:"attempts,omitempty"`
	// Platform is what the cell was measured on when that differs from
	// the index's provenance: a run resumed with --resume-anyway on another
	// host, CPU, kernel, Envoy or context; nil otherwise.
	Platform *infra.Info `json:"platform,omitempty"`
	// SHA256 and Bytes are the hash and size of the cell file as the run
	// wrote it (WriteCell), so that a report can tell a missing, truncated
	// or changed file; empty in a cell file itself, and in results written
	// before they were recorded.
	SHA256 string `json:"sha256,omitempty"`
	Bytes  int64  `json:"bytes,omitempty"`
}

// Attempt is one attempt of a cell whose figures the index does not use.
type Attempt struct {
	Attempt      int       `json:"attempt"`
	File         string    `json:"file"`
	Status       string    `json:"status"`
	Reason       string    `json:"reason,omitempty"`
	HostNoise    *float64  `json:"host_noise,omitempty"`
	HostSlowdown float64   `json:"host_slowdown,omitempty"`
	Noisy        bool      `json:"noisy,omitempty"`
	Start        time.Time `json:"start"`
	End          time.Time `json:"end"`
	SHA256       string    `json:"sha256"`
	Bytes        int64     `json:"bytes"`
}

// AttemptOf is s as one of another attempt's Attempts.
func AttemptOf(s Summary) Attempt {
	return Attempt{Attempt: max(s.Attempt, 1), File: s.File, Status: s.Status, Reason: s.Reason, HostNoise: s.HostNoise,
		HostSlowdown: s.HostSlowdown, Noisy: s.Noisy, Start: s.Start, End: s.End, SHA256: s.SHA256, Bytes: s.Bytes}
}

// Summary is the attempt's line as a cell's, for CheckCell.
func (a Attempt) summary(id string) Summary {
	return Summary{ID: id, File: a.File, SHA256: a.SHA256, Bytes: a.Bytes}
}

// PreferredAttempt says whether attempt a of a cell is to be used over
// attempt b: a quiet measurement over a noisy one, a measurement over a
// failure, and otherwise the later.
func PreferredAttempt(a, b Summary) bool {
	rank := func(s Summary) int {
		switch {
		case s.Status == StatusFailed:
			return 0
		case s.Noisy:
			return 1
		}
		return 2
	}
	if rank(a) != rank(b) {
		return rank(a) > rank(b)
	}
	return a.Attempt > b.Attempt
}

// Cell is one cell's full result, cells/<id>.json.
type Cell struct {
	Summary
	MeshSpec mesh.MeshSpec `json:"mesh_spec"`
	Load     Load          `json:"load"`
	// Merged is the exact merge of every generator's result; Generators
	// keeps each one, so per-namespace figures can be recomputed.
	Merged     *Generator       `json:"merged"`
	Generators []Generator      `json:"generators"`
	Resources  []metrics.Series `json:"resources"`
	// Host is the platform's host-noise figures for the measurement, per
	// node; nil where not measured.
	Host *infra.HostCPU `json:"host,omitempty"`
	// Replicas are the requests each app replica answered, when the
	// platform counted them (an optional field: older results lack it).
	Replicas []infra.ReplicaRequests `json:"replicas,omitempty"`
}

// Capacity is one mesh's capacity at the study's SLO: rps with its 95%
// interval (ci_low, ci_high), the slo, the bracket, and every trial that
// decided it, each with its own cell file holding its histograms and
// resource samples.
type Capacity struct {
	Mesh    string `json:"mesh"`
	Profile string `json:"profile"`
	search.Result
	Trials []CapacityTrial `json:"trials"`
	// Over is OverConnections when the search varied the connections held
	// open (its rates, RPS and interval, and its trials' offered and
	// achieved rates, count connections: achieved is the requests sent a
	// second over each connection's rate); empty when it varied the rate.
	Over string `json:"over,omitempty"`
	// Status is StatusOK once the search finished, StatusFailed when the
	// mesh could not be installed (Reason says why); while the run goes on
	// it is "running".
	Status string `json:"status"`
	Reason string `json:"reason,omitempty"`
}

// CapacityTrial is one trial of a capacity search and the cell file that
// holds its full result.
type CapacityTrial struct {
	search.Trial
	ID   string `json:"id"`
	File string `json:"file"`
	// SHA256 and Bytes are the cell file's, as written.
	SHA256 string `json:"sha256,omitempty"`
	Bytes  int64  `json:"bytes,omitempty"`
}

// OverConnections is the Over of a concurrent-connection ceiling search.
const OverConnections = "connections"

// CapacityRunning marks a capacity search still going on.
const CapacityRunning = "running"

// Published relations to another mesh.
const (
	RelationAdded     = "added"
	RelationRatio     = "ratio"
	RelationReduction = "reduction"
)

// Split splits the figure's metric into its relation ("" for an absolute
// figure) and the measured metric it applies to.
func (p Published) Split() (relation, base string) {
	for _, r := range []string{RelationAdded, RelationRatio, RelationReduction} {
		if b, ok := strings.CutPrefix(p.Metric, r+":"); ok {
			return r, b
		}
	}
	return "", p.Metric
}

// DeploymentOf is the deployment a cell ran in: its own number, or 1 in
// results from before deployments were recorded, which ran one.
func (s Summary) DeploymentOf() int { return max(s.Deployment, 1) }
