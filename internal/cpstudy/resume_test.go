package cpstudy

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/meshbench/meshbench/internal/istiod"
	"github.com/meshbench/meshbench/internal/results"
)

// partialRun writes a run's raw data as a run stopped after its first
// point leaves it.
func partialRun(t *testing.T, edit func(*Results)) string {
	t.Helper()
	dir := t.TempDir()
	c := DefaultConfig()
	c.Scales, c.Modes, c.Changes = []int{100, 400}, []Mode{Sidecar, Ambient}, 8
	r := &Results{Study: Name, Started: time.Now().UTC(), Config: c, Settings: Settings{IstiodVersion: "v1"},
		Points: []Point{{Mode: Sidecar, Pods: 100, Proxies: 100}}}
	if edit != nil {
		edit(r)
	}
	if err := results.WriteJSON(dir, ResultsFile, r); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestResumableTakesTheRunsConfigurationAndPoints(t *testing.T) {
	dir := partialRun(t, nil)
	c := DefaultConfig() // what the resuming command has: the default study
	c.Dir, c.Resume, c.Keep = dir, true, true
	res, cfg, done, err := resumable(c, istiod.Build{Version: "v1"})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(cfg.Scales, []int{100, 400}) || len(cfg.Modes) != 2 || cfg.Changes != 8 {
		t.Errorf("resumed configuration %v %v %d, want the run's own: [100 400] [sidecar ambient] 8", cfg.Scales, cfg.Modes, cfg.Changes)
	}
	if cfg.Dir != dir || !cfg.Keep || !cfg.Resume {
		t.Errorf("the resuming command's own settings were lost: %+v", cfg)
	}
	if !done[pointKey{Sidecar, 100}] || len(done) != 1 || len(res.Points) != 1 {
		t.Errorf("done %v, points %d; want sidecar at 100 pods only", done, len(res.Points))
	}
}

func TestResumableRefuses(t *testing.T) {
	for _, tc := range []struct {
		name    string
		edit    func(*Results)
		version string
		want    string
	}{
		{name: "complete", edit: func(r *Results) { r.Finished = time.Now() }, want: "complete"},
		{name: "another istiod", version: "v2", want: "measured istiod v1"},
		{name: "foreign point", edit: func(r *Results) { r.Points = append(r.Points, Point{Mode: AmbientWaypoint, Pods: 100}) }, want: "not one of"},
		{name: "repeated point", edit: func(r *Results) { r.Points = append(r.Points, r.Points[0]) }, want: "repeats"},
		{name: "bad configuration", edit: func(r *Results) { r.Config.Scales = []int{400, 100} }, want: "ascending"},
		{name: "another study", edit: func(r *Results) { r.Study = "quick" }, want: "not a control-plane"},
		// Sizes a results directory from someone else could hold.
		{name: "pods past the bound", edit: func(r *Results) { r.Config.Scales = []int{100, 1000, 10_000_000} }, want: "10000000 pods, more than the 150000"},
		{name: "changes past the bound", edit: func(r *Results) { r.Config.Changes = 1 << 30 }, want: "1073741824 changes, more than the 10000"},
		{name: "an endless idle", edit: func(r *Results) { r.Config.Idle = 1000 * time.Hour }, want: "idle 1000h0m0s, more than the 1h0m0s"},
		{name: "an endless sync", edit: func(r *Results) { r.Config.SyncTimeout = 1000 * time.Hour }, want: "sync timeout 1000h0m0s, more than the 1h0m0s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := DefaultConfig()
			c.Dir, c.Resume = partialRun(t, tc.edit), true
			v := tc.version
			if v == "" {
				v = "v1"
			}
			if _, _, _, err := resumable(c, istiod.Build{Version: v}); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want one saying %q", err, tc.want)
			}
		})
	}
	c := DefaultConfig()
	c.Dir, c.Resume = t.TempDir(), true
	if _, _, _, err := resumable(c, istiod.Build{Version: "v1"}); err == nil || !strings.Contains(err.Error(), "no control-plane study") {
		t.Fatalf("an empty directory: err = %v", err)
	}
}

// A run that holds the directory keeps a resume out.
func TestResumeRefusesALockedDirectory(t *testing.T) {
	dir := partialRun(t, nil)
	lock, err := results.Acquire(dir, []string{"meshbench", "run"})
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Release()
	c := DefaultConfig()
	c.Dir, c.Resume = dir, true
	_, _, _, l, err := begin(c, istiod.Build{Version: "v1"})
	var locked *results.LockedError
	if !errors.As(err, &locked) {
		if l != nil {
			l.Release()
		}
		t.Fatalf("err = %v, want the directory's lock refused", err)
	}
}
