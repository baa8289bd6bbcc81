package study

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"

	"sigs.k8s.io/yaml"

	"github.com/meshbench/meshbench/internal/infra"
	"github.com/meshbench/meshbench/internal/results"
	"github.com/meshbench/meshbench/internal/results/confined"
	"github.com/meshbench/meshbench/internal/topology"
)

// Defaults a parsed study carries.
const (
	DefaultRepetitions = 6
	// DefaultNoiseRetries is how many more times a noisy cell runs.
	DefaultNoiseRetries = 2
	DefaultConnections  = 64
	DefaultTimeout      = topology.Duration(10e9)
	// DefaultFraction leaves the slowest mesh well below saturation: on a
	// small or shared machine capacity varies from minute to minute, and
	// near saturation an open loop's latency is queueing, not the mesh.
	DefaultFraction = 0.3
	DefaultMeasure  = topology.Duration(20e9)
	DefaultWarmup   = topology.Duration(5e9)
)

// LoadFile reads and parses the study file at path, with the command
// line's platform settings over its own; a custom graph's path is relative
// to the file. Errors in the file are FieldErrors naming the file, line
// and field, all of them at once.
func LoadFile(path string, o PlatformOverride) (*Study, []byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("read study: %w", err)
	}
	s, err := parse(data, graphFiles(filepath.Dir(path)), o)
	if err != nil {
		return nil, nil, inFile(path, err)
	}
	return s, data, nil
}

// inFile names file in err: in each field error, or as a prefix.
func inFile(file string, err error) error {
	var errs FieldErrors
	if errors.As(err, &errs) {
		errs.inFile(file)
		return errs
	}
	return fmt.Errorf("%s: %w", file, err)
}

// Parse reads a study from YAML, refuses unknown fields, fills in defaults,
// resolves the workload's graph (a built-in, or a file relative to dir) and
// validates the whole. Errors name the offending field.
func Parse(data []byte, dir string) (*Study, error) {
	return parse(data, graphFiles(dir), PlatformOverride{})
}

// graphFiles finds a workload's graph: a built-in, or a file relative to dir.
func graphFiles(dir string) func(name string) (*topology.Graph, error) {
	return func(name string) (*topology.Graph, error) {
		if _, err := topology.Builtin(name); err != nil && !filepath.IsAbs(name) {
			name = filepath.Join(dir, name)
		}
		return topology.Load(name)
	}
}

// LoadRun reads the study of a results directory: its study.yaml, with
// the graph it deployed (graph.yaml) rather than the graph the study names
// today, so that a resumed run deploys exactly what the first part did.
// The command line's platform settings apply over the file's, as they did
// when the run started. Unless trust is set (--trust-study), what the
// file names outside the directory is refused (see Study.untrusted).
func LoadRun(dir string, o PlatformOverride, trust bool) (*Study, []byte, error) {
	path := filepath.Join(dir, results.StudyFile)
	data, err := confined.ReadFile(dir, results.StudyFile, results.MaxStudyBytes)
	if errors.Is(err, fs.ErrNotExist) {
		data, err = presetOfRun(dir)
	}
	if err != nil {
		return nil, nil, err
	}
	// A run stopped before it wrote graph.yaml deployed nothing yet.
	loadGraph := func(name string) (*topology.Graph, error) {
		g, err := topology.Builtin(name)
		if err != nil {
			return nil, fmt.Errorf("%s has no %s (the run stopped before writing it) and the study's graph %q is not built in: resume with the study file, meshbench run FILE --resume %s", dir, results.GraphFile, name, dir)
		}
		return g, nil
	}
	graph, err := confined.ReadFile(dir, results.GraphFile, results.MaxStudyBytes)
	switch {
	case err == nil:
		loadGraph = func(string) (*topology.Graph, error) {
			g, err := topology.Parse(graph)
			if fe := (*topology.FieldError)(nil); errors.As(err, &fe) {
				fe.File = filepath.Join(dir, results.GraphFile)
			}
			return g, err
		}
	case !errors.Is(err, fs.ErrNotExist):
		return nil, nil, err
	}
	s, err := parse(data, loadGraph, o)
	if err != nil {
		return nil, nil, inFile(path, err)
	}
	if errs := s.untrusted(o, dir); len(errs) > 0 && !trust {
		// The file parsed: checking it again only places the fields.
		fm, err := checkYAML(data)
		if err != nil {
			return nil, nil, err
		}
		return nil, nil, inFile(path, fm.placed(errs))
	}
	return s, data, nil
}

// presetOfRun is the built-in study a results directory without a study
// file was started from, found by the hash its index recorded: a run
// stopped between writing its index and its study file.
func presetOfRun(dir string) ([]byte, error) {
	ix, err := results.ReadIndex(dir)
	if err != nil {
		return nil, err
	}
	for _, name := range PresetNames() {
		src, err := PresetSource(name)
		if err != nil {
			continue
		}
		if sum := sha256.Sum256(src); hex.EncodeToString(sum[:]) == ix.StudyHash {
			return src, nil
		}
	}
	return nil, fmt.Errorf("%s has no %s (the run stopped before writing it) and its study is not a built-in one: resume with the study file, meshbench run FILE --resume %s", dir, results.StudyFile, dir)
}

// parse is Parse with the way the workload's graph is found and the
// command line's platform settings, applied before validation so that
// they can complete a platform section. Its errors in the file's content
// are FieldErrors, each placed at its line.
func parse(data []byte, loadGraph func(name string) (*topology.Graph, error), o PlatformOverride) (*Study, error) {
	fm, err := checkYAML(data)
	if err != nil {
		return nil, err
	}
	if len(fm.errs) > 0 {
		return nil, fm.errs
	}
	var s Study
	if err := yaml.UnmarshalStrict(data, &s); err != nil {
		return nil, fmt.Errorf("parse study: %w", err)
	}
	sum := sha256.Sum256(data)
	s.SHA256 = hex.EncodeToString(sum[:])
	if err := s.checkHeader(); err != nil {
		return nil, fm.placed(FieldErrors{err.(*FieldError)})
	}
	nodesGiven := len(s.Platform.Nodes) > 0
	// A study written for a cluster whose nodes pin CPUs would run
	// unpinned: refused, where a lab study run with --platform kubernetes
	// keeps its lab nodes for the lab (and a cluster's, run on the lab,
	// is pinned).
	kubeFile := s.Platform.Type == PlatformKubernetes
	s.defaults(binary.BigEndian.Uint64(sum[:8]))
	var errs FieldErrors
	if sc := s.Scaling; sc != nil && sc.MinAppCPUs != 0 && nodesGiven {
		errs = append(errs, asFieldError(fieldError("scaling.min_app_cpus", "applies to the lab's default nodes; this study names its nodes in platform.nodes, so give the app node's cpus there")))
	}
	for _, err := range []error{s.Platform.override(o, s.Scaling.minAppCPUs()), s.resolveGraph(loadGraph)} {
		if err != nil {
			errs = append(errs, asFieldError(err))
		}
	}
	if len(errs) == 0 {
		errs = append(errs, s.meshesOnPlatform()...)
	}
	if kubeFile && s.Platform.Type == PlatformKubernetes {
		errs = append(errs, s.Platform.cpusOnKubernetes()...)
	}
	errs = append(errs, s.validate()...)
	if len(errs) > 0 {
		return nil, fm.placed(errs)
	}
	ingress, err := s.usesPath(infra.PathIngress)
	if err != nil {
		return nil, fm.placed(FieldErrors{asFieldError(err)})
	}
	s.Platform.Ingress = ingress
	for _, m := range s.Meshes {
		s.Platform.Meshes = append(s.Platform.Meshes, m.MeshSpec)
	}
	return &s, nil
}

// meshesOnPlatform leaves out the meshes that name other platforms than
// the study's, and the published figures of those meshes.
func (s *Study) meshesOnPlatform() FieldErrors {
	var errs FieldErrors
	kept := s.Meshes[:0:0]
	left := map[string]bool{}
	for i, m := range s.Meshes {
		for j, p := range m.Platforms {
			if p != PlatformLab && p != PlatformKubernetes {
				errs = append(errs, asFieldError(fieldError(fmt.Sprintf("meshes[%d].platforms[%d]", i, j), "%q: want %s or %s", p, PlatformLab, PlatformKubernetes)))
			}
		}
		if len(m.Platforms) == 0 || slices.Contains(m.Platforms, s.Platform.Type) {
			kept = append(kept, m)
		} else {
			left[m.Name] = true
		}
	}
	if len(errs) == 0 && len(left) > 0 {
		s.Meshes = kept
		s.Published = slices.DeleteFunc(s.Published, func(p results.Published) bool { return left[p.Mesh] || left[p.Against] })
		s.thresholdsOnPlatform(left)
	}
	return errs
}

// usesPath reports whether some cell loads through path.
func (s *Study) usesPath(path infra.LoadPath) (bool, error) {
	axes, err := s.axes()
	if err != nil {
		return false, err
	}
	points, err := s.points(axes)
	if err != nil {
		return false, err
	}
	for _, pt := range points {
		if pt.setting.Load.Path == path {
			return true, nil
		}
	}
	return false, nil
}

// asFieldError is err as a FieldError, with no field when it names none.
func asFieldError(err error) *FieldError {
	if fe, ok := err.(*FieldError); ok {
		return fe
	}
	return &FieldError{Msg: err.Error()}
}

// placed gives each error the line of its field, and sorts them in file
// order.
func (m *fileMap) placed(errs FieldErrors) FieldErrors {
	for _, e := range errs {
		m.place(e)
	}
	sort.SliceStable(errs, func(i, j int) bool {
		return errs[i].Line < errs[j].Line || errs[i].Line == errs[j].Line && errs[i].Column < errs[j].Column
	})
	return errs
}

func (s *Study) checkHeader() error {
	switch {
	case s.APIVersion == "":
		return fieldError("apiVersion", "required: %s", APIVersion)
	case s.APIVersion != APIVersion:
		return fieldError("apiVersion", "%q is not supported; this meshbench reads %s", s.APIVersion, APIVersion)
	case s.Kind != Kind:
		return fieldError("kind", "want %s, got %q", Kind, s.Kind)
	}
	return nil
}

func (s *Study) defaults(seed uint64) {
	if s.Platform.Type == "" {
		s.Platform.Type = PlatformLab
	}
	if len(s.Platform.Nodes) == 0 && s.Platform.Type == PlatformLab {
		s.Platform.Nodes = DefaultLabNodes(s.Scaling.minAppCPUs())
	}
	infra.NameNodes(s.Platform.Nodes)
	if s.Workload.Namespaces == 0 {
		s.Workload.Namespaces = 1
	}
	for i := range s.Meshes {
		if s.Meshes[i].Name == "" {
			s.Meshes[i].Name = s.Meshes[i].Profile
		}
	}
	l := &s.Load
	if l.Connections == 0 {
		l.Connections = DefaultConnections
	}
	if l.Timeout == 0 {
		l.Timeout = DefaultTimeout
	}
	if l.KeepAlive == nil {
		l.KeepAlive = new(true)
	}
	if l.Path == "" {
		l.Path = "service"
	}
	if l.Generators == "" {
		l.Generators = GeneratorsOne
	}
	if s.Search != nil && l.Duration == 0 && l.Requests == 0 {
		// Each trial sets its own length; the load's is the shortest.
		l.Duration = topology.Duration(s.Search.Config().Trial)
	}
	s.Repetitions.defaults()
	if s.Deployments == 0 {
		s.Deployments = s.Repetitions.Min
	}
	if s.MaxErrorRate == nil {
		s.MaxErrorRate = new(float64(DefaultMaxErrorRate))
	}
	if s.Noise == nil {
		s.Noise = &Noise{}
	}
	if s.Noise.Threshold == 0 {
		s.Noise.Threshold = results.DefaultNoiseThreshold
	}
	if s.Noise.Retries == nil {
		s.Noise.Retries = new(DefaultNoiseRetries)
	}
	if s.Order.Shuffle == nil {
		s.Order.Shuffle = new(true)
	}
	if s.Order.Seed == 0 {
		s.Order.Seed = seed
	}
	if sc := s.Scaling; sc != nil {
		if sc.Fraction == 0 {
			sc.Fraction = DefaultFraction
		}
		if sc.Measure == 0 {
			sc.Measure = DefaultMeasure
		}
		if sc.Warmup == 0 {
			sc.Warmup = DefaultWarmup
		}
		if len(sc.Tenants) > 0 && sc.Deploy == "" {
			sc.Deploy = DeployLoaded
		}
	}
}

// resolveGraph loads the workload's graph and applies the study's
// resource overrides to it.
func (s *Study) resolveGraph(loadGraph func(string) (*topology.Graph, error)) error {
	name := s.Workload.Graph
	if name == "" {
		return fieldError("workload.graph", "required: a built-in graph (%s) or a graph file", joinNames(topology.BuiltinNames()))
	}
	g, err := loadGraph(name)
	if err != nil {
		return fieldError("workload.graph", "%v", err)
	}
	for key := range s.Workload.Resources {
		if key != "*" && g.Service(key) == nil {
			return fieldError("workload.resources", "graph %q has no service %q", g.Name, key)
		}
	}
	if res := s.Workload.Resources; len(res) > 0 {
		for i := range g.Services {
			svc := &g.Services[i]
			if r, ok := res[svc.Name]; ok {
				svc.Resources = r
			} else if r, ok := res["*"]; ok {
				svc.Resources = r
			}
		}
		if err := g.Normalize(); err != nil {
			return fieldError("workload.resources", "%v", err)
		}
	}
	for key := range s.Workload.CPUWork {
		if key != "*" && g.Service(key) == nil {
			return fieldError("workload.cpu_work", "graph %q has no service %q", g.Name, key)
		}
	}
	if work := s.Workload.CPUWork; len(work) > 0 {
		for i := range g.Services {
			svc := &g.Services[i]
			w, ok := work[svc.Name]
			if !ok {
				w, ok = work["*"]
			}
			if !ok {
				continue
			}
			if w < 0 {
				return fieldError("workload.cpu_work", "%s: must not be negative, got %s", svc.Name, w)
			}
			svc.CPUWork = w
			for j := range svc.Versions {
				svc.Versions[j].CPUWork = 0 // the study's figure holds for every version
			}
		}
	}
	s.Graph = g
	return nil
}

// DefaultLabNodes is the lab's cluster when a study names no nodes: one
// node per role, and a client node outside the cluster for the ingress
// path. With two or more CPUs the load generators and the outside client
// are pinned to CPU 0 and the application (with its proxies) to the
// others, so that the generators do not take the cycles of what they
// measure; the mesh node (ingress gateway) floats. An app node that would
// get fewer than minAppCPUs runs on every CPU (Scaling.MinAppCPUs).
func DefaultLabNodes(minAppCPUs int) []infra.NodeSpec {
	return labNodes(runtime.NumCPU(), minAppCPUs)
}

func labNodes(cpus, minAppCPUs int) []infra.NodeSpec {
	nodes := []infra.NodeSpec{
		{Name: "app", Role: infra.NodeApp},
		{Name: "load", Role: infra.NodeLoad},
		{Name: "mesh", Role: infra.NodeMesh},
		{Name: "client", Role: infra.NodeClient},
	}
	if cpus < 2 {
		return nodes
	}
	last := strconv.Itoa(cpus - 1)
	nodes[0].CPUs, nodes[1].CPUs, nodes[3].CPUs = "1-"+last, "0", "0"
	switch {
	case cpus-1 < minAppCPUs:
		nodes[0].CPUs = "0-" + last
	case cpus == 2:
		nodes[0].CPUs = "1"
	}
	return nodes
}
