package report

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/meshbench/meshbench/internal/analysis"
	"github.com/meshbench/meshbench/internal/infra"
	"github.com/meshbench/meshbench/internal/mesh"
	"github.com/meshbench/meshbench/internal/metrics"
)

// SMPVersion is the Service Mesh Performance release whose messages the
// export follows (protos/service_mesh_performance.proto and
// protos/service_mesh.proto).
const SMPVersion = "v0.6.1"

const smpEnvID = "environment"

// WriteSMP exports every usable repetition as an SMP performance test
// result, with its load as a test config and its mesh and data-plane usage
// as a mesh config. Excluded cells are listed apart, never as results.
func WriteSMP(w io.Writer, d *analysis.Dataset) error {
	ix := d.Index
	x := smpExport{SMPVersion: SMPVersion, Generator: "meshbench " + ix.Provenance.MeshbenchVersion, Environment: smpEnv(d)}
	for _, c := range d.Configs {
		var tc *smpTestConfig
		for _, m := range d.Meshes {
			g := d.Group(m, c)
			if g == nil {
				continue
			}
			for _, r := range g.Reps {
				if tc == nil {
					tc = smpTest(c, r)
					x.TestConfigs = append(x.TestConfigs, *tc)
				}
				mc := smpMesh(d, r)
				x.MeshConfigs = append(x.MeshConfigs, mc)
				x.Results = append(x.Results, smpResult(d, c, r, tc.ID, mc.ID))
			}
		}
	}
	for _, e := range d.Excluded {
		x.Omitted = append(x.Omitted, smpOmittedCell{ID: e.Summary.ID, Status: e.Kind, Reason: e.Reason})
	}
	b, err := json.MarshalIndent(x, "", "  ")
	if err != nil {
		return fmt.Errorf("encode SMP export: %w", err)
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

func smpEnv(d *analysis.Dataset) smpEnvironment {
	pi := mixedPlatform(d.Index)
	e := smpEnvironment{SMPVersion: SMPVersion, ID: smpEnvID, KubernetesVersion: pi.Versions["kubernetes"],
		Labels: map[string]string{
			"meshbench.platform": pi.Name, "meshbench.kernel": pi.Kernel, "meshbench.cpu_model": pi.CPUModel,
			"meshbench.study": d.Index.Study, "meshbench.study_sha256": d.Index.StudyHash,
		}}
	if pi.EnvoyVersion != "" {
		e.Labels["meshbench.envoy_version"] = pi.EnvoyVersion
	}
	for _, n := range d.Index.Provenance.Cluster.Nodes {
		cores := int32(pi.CPUs)
		if n.CPUs != "" {
			cpus, _ := infra.ParseCPUList(n.CPUs)
			cores = int32(len(cpus))
			e.Labels["meshbench.node."+n.Name+".cpus"] = n.CPUs
		}
		e.Nodes = append(e.Nodes, smpNode{Type: string(n.Role), Cores: cores})
	}
	return e
}

func smpTest(c analysis.LoadConfig, r *analysis.Rep) *smpTestConfig {
	o := r.Load.Options
	t := &smpTestConfig{SMPVersion: SMPVersion, ID: "load-" + fileSlug(c), Name: c.Label(),
		Labels: map[string]string{"meshbench.loop": "closed"}}
	if o.Rate > 0 {
		t.Labels["meshbench.loop"] = "open"
	}
	if o.Duration > 0 {
		t.Duration = o.Duration.String()
	}
	if o.Requests > 0 {
		t.Labels["meshbench.requests"] = strconv.FormatInt(o.Requests, 10)
	}
	for k, v := range c.Params {
		t.Labels["meshbench.params."+k] = v
	}
	cl := smpClient{Internal: r.Load.Path != string(infra.PathIngress), LoadGenerator: "meshbench", Protocol: "PROTOCOL_HTTP",
		Connections: int32(o.Connections), RPS: int64(math.Round(o.Rate))}
	if o.URL != "" {
		cl.EndpointURLs = []string{o.URL}
	}
	t.Clients = []smpClient{cl}
	return t
}

func smpMesh(d *analysis.Dataset, r *analysis.Rep) smpMeshConfig {
	pi := mixedPlatform(d.Index)
	profile := r.Summary.Profile
	if profile == "" {
		profile = r.MeshSpec.Profile
	}
	m := smpMeshConfig{SMPVersion: SMPVersion, ID: "mesh-" + r.Summary.ID, Profile: profile,
		ProxyConcurrency: int32(r.MeshSpec.Workers), Labels: map[string]string{"meshbench.mesh": r.Summary.Mesh}}
	if prof, ok := mesh.LookupProfile(profile); ok && prof.Mesh != "" {
		if pi.Name == infra.Lab {
			labMesh(&m, prof, cmp.Or(mesh.EnvoyVersion(r.Summary.Verification), pi.EnvoyVersion), istiodVersion(r))
		} else {
			kubeMesh(&m, prof, pi)
		}
	}
	// Only the checks that proved it: plaintext refused and the peer's
	// identity seen; a mesh that could do mTLS but was not shown to is
	// exported without it.
	m.MTLSEnabled = mesh.MTLSProven(r.Summary.Verification)
	if m.MTLSEnabled {
		var ev []string
		for _, c := range r.Summary.Verification {
			if c.Name == mesh.CheckPlaintextRefused || c.Name == mesh.CheckPeerIdentity {
				ev = append(ev, c.Name+": "+c.Detail)
			}
		}
		m.Labels["meshbench.mtls_evidence"] = strings.Join(ev, "; ")
	}
	m.Sidecar = usage(r, analysis.RolePart(metrics.RoleSidecar))
	m.IngressGateway = usage(r, analysis.RolePart(metrics.RoleIngress))
	m.MeshControlPlane = usage(r, analysis.RolePart(metrics.RoleControlPlane))
	// SMP has no slot for per-node proxies or waypoints: they go to labels.
	for _, p := range []analysis.Part{analysis.RolePart(metrics.RoleNodeProxy), analysis.RolePart(metrics.RoleWaypoint), analysis.RolePart(metrics.RoleCNI)} {
		if u := usage(r, p); u != nil {
			k := "meshbench." + strings.ReplaceAll(string(p), "-", "_")
			m.Labels[k+".count"] = strconv.Itoa(int(u.Count))
			m.Labels[k+".cpu_mcores"] = strconv.Itoa(int(u.CPUMcores))
			m.Labels[k+".mem_mb"] = strconv.Itoa(int(u.MemMB))
		}
	}
	return m
}

// labMesh exports a lab mesh as what it is: upstream Envoy, configured by
// meshbench in the roles Istio gives its proxies, with no Istio build or
// control plane. The proxy build is the release the cell's mesh ran (a
// study can compare releases). SMP's mesh type would claim Istio, so it is left out and
// labels say what ran.
func labMesh(m *smpMeshConfig, prof mesh.Profile, envoyVersion, istiod string) {
	role, absent := "Istio's sidecar in every pod", "no Istio control plane ran"
	configured := "configured by meshbench"
	if istiod != "" {
		// mesh_control_plane holds istiod's measured usage.
		configured, absent = "configured by istiod "+istiod+" over xDS through meshbench's relay", "no istio-agent ran"
	}
	if prof.NodeProxies() {
		role, absent = "Istio ambient's per-node proxy (ztunnel's role)", "no Istio control plane or ztunnel ran"
	}
	if prof.Waypoint {
		role += " and its per-namespace waypoint"
	}
	m.Labels["meshbench.dataplane"] = "upstream Envoy as " + role + ", " + configured + "; " + absent
	m.Labels["meshbench.emulates"] = prof.Mesh
	m.Labels["meshbench.proxy"] = "envoy"
	m.ProxyBuild = envoyVersion
}

// kubeMesh exports a mesh installed from its charts, with the versions the
// platform recorded: what a release installed, else the chart version the
// study asked for; what was not recorded is left out.
func kubeMesh(m *smpMeshConfig, prof mesh.Profile, pi infra.Info) {
	fam := prof.Family()
	// A mesh meshbench does not install (Cilium, the cluster's own) has no
	// version chart: its version is left out, and each cell's
	// mesh-installed facts name its images.
	v := recordedVersion(pi, fam.VersionChart)
	m.MeshType = &smpMeshType{Type: fam.SMPType, Version: v}
	m.MeshBuild = v
	switch {
	case prof.NodeProxies():
		m.ProxyBuild = recordedVersion(pi, fam.NodeProxyChart)
	case fam.EnvoyProxies:
		m.ProxyBuild = pi.EnvoyVersion
	}
}

func recordedVersion(pi infra.Info, release string) string {
	if release == "" {
		return ""
	}
	if v := pi.Versions["release/"+release]; v != "" {
		return v
	}
	return pi.Versions["chart/"+release]
}

// usage is a part's component count, mean CPU in millicores and mean
// working set in MiB in one repetition, or nil when it has none.
func usage(r *analysis.Rep, p analysis.Part) *smpUsage {
	a, ok := r.Alloc[p]
	if !ok {
		return nil
	}
	return &smpUsage{
		Count:     int32(a.Components),
		CPUMcores: int32(math.Round(r.Values[analysis.CPU(p)] * 1000)),
		MemMB:     int32(math.Round(r.Values[analysis.Memory(p)] / (1 << 20))),
	}
}

func smpResult(d *analysis.Dataset, c analysis.LoadConfig, r *analysis.Rep, testID, meshID string) smpTestResult {
	v := r.Values
	secs := v[analysis.Duration]
	res := smpTestResult{
		SMPVersion: SMPVersion, ID: r.Summary.ID, TestID: testID, MeshConfigID: meshID, EnvID: smpEnvID,
		StartTime: smpTime(r.Start), EndTime: smpTime(r.Start.Add(time.Duration(secs * float64(time.Second)))),
		LatenciesMs: smpLatency{Min: v[analysis.MinLatency], Average: v[analysis.MeanLatency], P50: v[analysis.P50],
			P90: v[analysis.P90], P99: v[analysis.P99], Max: v[analysis.MaxLatency]},
		ActualQPS:  v[analysis.QPS],
		DetailsURI: r.Summary.File,
		Labels: map[string]string{
			"meshbench.study": d.Index.Study, "meshbench.mesh": r.Summary.Mesh,
			"meshbench.repetition": strconv.Itoa(r.Summary.Repetition),
			"meshbench.p95_ms":     fmtFloat(v[analysis.P95]), "meshbench.p99_9_ms": fmtFloat(v[analysis.P999]),
			"meshbench.requests": strconv.FormatInt(r.Summary.Requests, 10), "meshbench.errors": strconv.FormatInt(r.Summary.Errors, 10),
		},
	}
	for k, val := range c.Params {
		res.Labels["meshbench.params."+k] = val
	}
	for _, p := range []analysis.Part{analysis.RolePart(metrics.RoleApp), analysis.RolePart(metrics.RoleLoad)} {
		if _, ok := r.Alloc[p]; ok {
			k := "meshbench." + string(p)
			res.Labels[k+".cpu_mcores"] = strconv.Itoa(int(math.Round(v[analysis.CPU(p)] * 1000)))
			res.Labels[k+".mem_mb"] = strconv.Itoa(int(math.Round(v[analysis.Memory(p)] / (1 << 20))))
		}
	}
	return res
}

// smpTime formats a time as proto3 JSON's Timestamp: UTC, "Z", and 0 or 9
// fractional digits.
func smpTime(t time.Time) string {
	t = t.UTC()
	if t.Nanosecond() == 0 {
		return t.Format("2006-01-02T15:04:05Z")
	}
	return t.Format("2006-01-02T15:04:05.000000000Z")
}

func fmtFloat(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// istiodVersion is the istiod build that configured a lab cell's proxies
// (control_plane istiod), as its config-from-istiod check recorded it;
// empty for meshbench's own configuration.
func istiodVersion(r *analysis.Rep) string {
	if r.MeshSpec.ControlPlane != mesh.ControlPlaneIstiod {
		return ""
	}
	for _, c := range r.Summary.Verification {
		if c.Name == mesh.CheckIstiodConfig {
			return cmp.Or(c.Facts[mesh.FactIstiodVersion], "(version not recorded)")
		}
	}
	return "(version not recorded)"
}
