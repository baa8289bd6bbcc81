package study

import (
	"strings"
	"testing"

	"github.com/meshbench/meshbench/internal/infra"
)

// The lab's default layout keeps the generators on CPU 0 and the app on
// the rest, unless that leaves the app fewer CPUs than min_app_cpus asks:
// then the app runs on every CPU.
func TestLabNodes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name             string
		cpus, minApp     int
		app, load, other string
	}{
		{name: "one CPU: nothing pinned", cpus: 1, minApp: 2, app: "", load: ""},
		{name: "two CPUs", cpus: 2, app: "1", load: "0"},
		{name: "two CPUs, two for the app", cpus: 2, minApp: 2, app: "0-1", load: "0"},
		{name: "four CPUs", cpus: 4, app: "1-3", load: "0"},
		{name: "four CPUs, two for the app: already", cpus: 4, minApp: 2, app: "1-3", load: "0"},
		{name: "four CPUs, four for the app", cpus: 4, minApp: 4, app: "0-3", load: "0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := map[infra.NodeRole]string{}
			for _, n := range labNodes(tc.cpus, tc.minApp) {
				got[n.Role] = n.CPUs
			}
			if got[infra.NodeApp] != tc.app || got[infra.NodeLoad] != tc.load || got[infra.NodeClient] != tc.load || got[infra.NodeMesh] != "" {
				t.Errorf("CPUs by role %v, want app %q, load and client %q, mesh unpinned", got, tc.app, tc.load)
			}
		})
	}
}

// The scaling note says when the app node shares the load node's CPUs, and
// why when min_app_cpus made it so.
func TestSharedCPUsNote(t *testing.T) {
	t.Parallel()
	s := &Study{Scaling: &Scaling{MinAppCPUs: 2}, Platform: Platform{Nodes: labNodes(2, 2)}}
	note := s.sharedCPUs()
	for _, want := range []string{"CPUs 0-1", "sharing CPUs 0 with the load node (load)", "parallel calls", "min_app_cpus 2"} {
		if !strings.Contains(note, want) {
			t.Errorf("note %q lacks %q", note, want)
		}
	}
	s = &Study{Platform: Platform{Nodes: labNodes(2, 0)}}
	if note := s.sharedCPUs(); note != "" {
		t.Errorf("apart, the note is %q, want none", note)
	}
}
