package report

import (
	"crypto/sha256"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/meshbench/meshbench/internal/infra"
	"github.com/meshbench/meshbench/internal/results"
)

// provenance is what the results say about how they were made: versions,
// host, pinning, the study, each mesh's verification and the scaling.
func (b *builder) provenance() Section {
	s := Section{ID: "provenance", Title: "Provenance"}
	ix := b.d.Index
	pv := ix.Provenance
	pi := pv.Platform
	versions := []string{
		"meshbench " + orUnknown(pv.MeshbenchVersion) + ", built with " + orUnknown(pv.GoVersion),
	}
	if pi.EnvoyVersion != "" {
		versions = append(versions, "Envoy "+pi.EnvoyVersion)
	}
	for _, k := range slices.Sorted(maps.Keys(pi.Versions)) {
		versions = append(versions, k+" "+pi.Versions[k])
	}
	s.Blocks = append(s.Blocks, heading("Versions"), Block{List: versions})
	host := []string{
		fmt.Sprintf("Platform: %s", orUnknown(pi.Name)),
		fmt.Sprintf("Host: %s", orUnknown(pi.Host)),
		fmt.Sprintf("Kernel: %s", orUnknown(pi.Kernel)),
		fmt.Sprintf("CPU: %s, %d CPUs", orUnknown(pi.CPUModel), pi.CPUs),
		fmt.Sprintf("cgroup v%d; CPU pinning %s", pi.CgroupVersion, yesNo(pi.CanPinCPUs, "available", "not available")),
	}
	if pi.Context != "" {
		host = append(host, "Kubernetes context: "+pi.Context)
	}
	s.Blocks = append(s.Blocks, heading("Host"), Block{List: host})
	if mixed := mixedCells(ix); len(mixed) > 0 {
		s.Blocks = append(s.Blocks, heading("Mixed provenance"),
			text("The run was resumed with --resume-anyway elsewhere than it started, so its cells were not all measured on the platform above:"),
			Block{List: mixed})
	}
	if len(pv.Cluster.Nodes) > 0 {
		t := &Table{Header: []string{"Node", "Role", "Pinned CPUs"}}
		for _, n := range pv.Cluster.Nodes {
			cpus := n.CPUs
			if cpus == "" {
				cpus = "unpinned"
			}
			t.Rows = append(t.Rows, []string{n.Name, string(n.Role), cpus})
		}
		s.Blocks = append(s.Blocks, heading("Nodes and pinning"), table(t))
	}
	study := []string{
		"Study: " + orUnknown(ix.Study),
		"Study file SHA-256: " + orUnknown(ix.StudyHash),
		"Results: " + fmt.Sprintf("schema %d, %d cells, complete: %s", ix.Schema, len(ix.Cells), yesNo(ix.Complete, "yes", "no")),
		fmt.Sprintf("Cell order: meshes interleaved within each round, shuffled with seed %d.", ix.Seed),
		"Statistics: " + b.statisticsText(),
	}
	s.Blocks = append(s.Blocks, heading("Study"), Block{List: append(study, b.studyFileCheck())})
	if b.d.StudyFile != nil {
		s.Blocks = append(s.Blocks, Block{Heading: "The study file, " + results.StudyFile, Code: string(b.d.StudyFile), Collapsed: true})
	}
	s.Blocks = append(append(s.Blocks, heading("Scaling")), scaling(pv.Scaling)...)
	if len(pv.Deployments) > 1 {
		var l []string
		for _, d := range pv.Deployments {
			line := fmt.Sprintf("deployment %d, from %s", d.Index, d.Start.UTC().Format("15:04:05"))
			if d.Scaling != nil && d.Scaling.Factor > 0 && d.Scaling.Mode != results.ScaleNone {
				line += fmt.Sprintf(": factor %.4g", d.Scaling.Factor)
				if d.Scaling.Rate > 0 {
					line += fmt.Sprintf(", %.1f req/s", d.Scaling.Rate)
				}
				if d.Scaling.Reference != "" {
					line += fmt.Sprintf(" (%s's capacity %.1f req/s)", d.Scaling.Reference, d.Scaling.Capacities[d.Scaling.Reference])
				}
			}
			l = append(l, line)
		}
		s.Blocks = append(s.Blocks, text("Each deployment brought the platform up afresh, deployed the workload and, where the study calibrates, calibrated on its own:"), Block{List: l})
	}
	s.Blocks = append(s.Blocks, heading("Verification per mesh"), table(b.verification()))
	if meshes := b.accessLogged(); len(meshes) > 0 {
		s.Blocks = append(s.Blocks, heading("Access logs"), text(fmt.Sprintf(
			"Access logs were on for %s: their node proxies and waypoints logged every HBONE stream they terminated, "+
				"and the CPU and memory that logging took are inside the data-plane figures above. "+
				"The other meshes' proxies log only while verification runs.", strings.Join(meshes, ", "))))
	}
	if len(pv.EnvoyConfigHashes) > 0 {
		t := &Table{Header: []string{"Mesh", "Envoy configuration hash"}}
		if len(pv.EnvoyVersions) > 0 {
			t.Header = append(t.Header, "Envoy release")
		}
		for _, k := range slices.Sorted(maps.Keys(pv.EnvoyConfigHashes)) {
			row := []string{k, pv.EnvoyConfigHashes[k]}
			if len(pv.EnvoyVersions) > 0 {
				row = append(row, pv.EnvoyVersions[k])
			}
			t.Rows = append(t.Rows, row)
		}
		s.Blocks = append(s.Blocks, heading("Envoy configurations"), table(t))
	}
	return s
}

// accessLogged lists the meshes with a usable repetition measured with
// access logs on (MeshSpec.AccessLog).
func (b *builder) accessLogged() []string {
	var out []string
	for _, m := range b.d.Meshes {
	configs:
		for _, c := range b.d.Configs {
			if g := b.d.Group(m, c); g != nil {
				for _, r := range g.Reps {
					if r.MeshSpec.AccessLog {
						out = append(out, m)
						break configs
					}
				}
			}
		}
	}
	return out
}

// verification tallies each mesh's checks over all its cells, excluded
// ones included, with the detail of the latest failure.
func (b *builder) verification() *Table {
	t := &Table{Header: []string{"Mesh", "Check", "Passed", "Failed", "Detail"}}
	type tally struct {
		pass, fail int
		detail     string
	}
	for _, m := range b.d.Meshes {
		var names []string
		counts := map[string]*tally{}
		for _, c := range b.d.Index.Cells {
			if c.Mesh != m {
				continue
			}
			for _, ch := range c.Verification {
				tl, ok := counts[ch.Name]
				if !ok {
					tl = &tally{}
					counts[ch.Name] = tl
					names = append(names, ch.Name)
				}
				if ch.Pass {
					tl.pass++
					if tl.detail == "" {
						tl.detail = ch.Detail
					}
				} else {
					tl.fail++
					tl.detail = "FAILED in " + c.ID + ": " + ch.Detail
				}
			}
		}
		if len(names) == 0 {
			t.Rows = append(t.Rows, []string{m, "none recorded", "", "", ""})
		}
		for _, n := range names {
			tl := counts[n]
			t.Rows = append(t.Rows, []string{m, n, fmt.Sprint(tl.pass), fmt.Sprint(tl.fail), tl.detail})
		}
	}
	return t
}

func orUnknown(s string) string {
	if s == "" {
		return "not recorded"
	}
	return s
}

func yesNo(b bool, yes, no string) string {
	if b {
		return yes
	}
	return no
}

// studyFileCheck says whether the study file kept with the results is the
// one the index recorded the hash of.
// statisticsText says what a figure and its interval are, for this run's
// deployments.
func (b *builder) statisticsText() string {
	s := "every figure is the median of its units with a distribution-free interval (order statistics for a figure, Wilcoxon's signed-rank with the Hodges-Lehmann estimate for a difference between meshes measured in the same rounds), at 95% where the design reaches it and at the level it reaches, shown beside it, where it does not (docs/statistics.md). "
	if n := b.d.Deployments(); n > 1 {
		return s + fmt.Sprintf("The units are the study's %d independent deployments, each one's median over its rounds, so the intervals count the variation between runs as far as deployments show it.", n)
	}
	return s + "These results hold one deployment, so the units are its rounds: the intervals show the variation between rounds, not between runs, and are too narrow for what another run would find."
}

func (b *builder) studyFileCheck() string {
	if b.d.StudyFile == nil {
		return "The results directory keeps no " + results.StudyFile + "."
	}
	sum := fmt.Sprintf("%x", sha256.Sum256(b.d.StudyFile))
	if sum == b.d.Index.StudyHash {
		return results.StudyFile + " is kept with the results and matches the recorded hash."
	}
	return fmt.Sprintf("%s kept with the results DOES NOT match the recorded hash (its SHA-256 is %s): it was edited after the run.", results.StudyFile, sum)
}

// mixedCells lists, for each platform other than the index's that cells
// were measured on (a run resumed with --resume-anyway), that platform
// and its cells.
func mixedCells(ix *results.Index) []string {
	var keys []string
	cells := map[string][]string{}
	for _, c := range ix.Cells {
		if c.Platform == nil {
			continue
		}
		p := c.Platform
		k := fmt.Sprintf("host %s, CPU %s, kernel %s, Envoy %s", orUnknown(p.Host), orUnknown(p.CPUModel), orUnknown(p.Kernel), orUnknown(p.EnvoyVersion))
		if p.Context != "" {
			k += ", context " + p.Context
		}
		if cells[k] == nil {
			keys = append(keys, k)
		}
		cells[k] = append(cells[k], c.ID)
	}
	var out []string
	for _, k := range keys {
		out = append(out, fmt.Sprintf("%d of %d cells on %s: %s", len(cells[k]), len(ix.Cells), k, strings.Join(cells[k], ", ")))
	}
	return out
}

// mixedPlatform is the index's platform with, where cells were measured
// on others (a run resumed with --resume-anyway), each fact that differs
// listing every value, so that an export naming one platform names them
// all.
func mixedPlatform(ix *results.Index) infra.Info {
	pi := ix.Provenance.Platform
	join := func(field func(infra.Info) string) string {
		vals := []string{field(pi)}
		for _, c := range ix.Cells {
			if c.Platform != nil && !slices.Contains(vals, field(*c.Platform)) {
				vals = append(vals, field(*c.Platform))
			}
		}
		return strings.Join(vals, " + ")
	}
	pi.Host = join(func(p infra.Info) string { return p.Host })
	pi.CPUModel = join(func(p infra.Info) string { return p.CPUModel })
	pi.Kernel = join(func(p infra.Info) string { return p.Kernel })
	pi.EnvoyVersion = join(func(p infra.Info) string { return p.EnvoyVersion })
	pi.Context = join(func(p infra.Info) string { return p.Context })
	return pi
}
