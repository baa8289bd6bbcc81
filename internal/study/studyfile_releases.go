package study

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/meshbench/meshbench/internal/mesh"
	"github.com/meshbench/meshbench/internal/versions"
)

// WithReleases rewrites a study file's meshes: its baseline meshes stay,
// and each of the profiles (default: every other profile the file names,
// in its order) runs once under each release, as a mesh named
// PROFILE-X-Y-Z with proxy_version X.Y.Z, but for the releases before
// the profile's MinLabEnvoy (the lab's waypoint runs on 1.38.2 and
// later), which it leaves out. The rest of the file, comments
// included, is kept, so that the runs join the series of the study they
// came from (a history's series key ignores the list of meshes).
func WithReleases(src []byte, profiles, releases []string) ([]byte, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(src, &doc); err != nil {
		return nil, fmt.Errorf("study: %w", err)
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, fmt.Errorf("study: not a mapping")
	}
	root := doc.Content[0]
	var meshes *yaml.Node
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value == "meshes" {
			meshes = root.Content[i+1]
		}
	}
	if meshes == nil || meshes.Kind != yaml.SequenceNode {
		return nil, fmt.Errorf("study: no meshes list")
	}
	var kept []*yaml.Node
	var named []string
	for _, m := range meshes.Content {
		var spec struct {
			Profile string `yaml:"profile"`
		}
		if m.Kind == yaml.ScalarNode { // the shorthand: a profile's name alone
			spec.Profile = m.Value
		} else if err := m.Decode(&spec); err != nil {
			return nil, fmt.Errorf("study: meshes: %w", err)
		}
		if spec.Profile == mesh.ProfileBaseline {
			kept = append(kept, m)
		} else if !slices.Contains(named, spec.Profile) {
			named = append(named, spec.Profile)
		}
	}
	if len(profiles) == 0 {
		profiles = named
	}
	if len(profiles) == 0 {
		return nil, fmt.Errorf("study: no profile but the baseline to run under the releases")
	}
	for _, p := range profiles {
		if p == mesh.ProfileBaseline {
			return nil, fmt.Errorf("--profile %s runs no proxy release", p)
		}
		for _, r := range releases {
			if pr, ok := mesh.LookupProfile(p); ok && pr.MinLabEnvoy != "" && versions.CompareReleases(r, pr.MinLabEnvoy) < 0 {
				continue // the lab's data plane for it cannot run that release
			}
			var n yaml.Node
			entry := map[string]string{"name": p + "-" + strings.ReplaceAll(r, ".", "-"), "profile": p, "proxy_version": r}
			if err := n.Encode(entry); err != nil {
				return nil, err
			}
			n.Style = yaml.FlowStyle
			kept = append(kept, &n)
		}
	}
	meshes.Content, meshes.Style = kept, 0 // one mesh a line
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return nil, err
	}
	return buf.Bytes(), enc.Close()
}
