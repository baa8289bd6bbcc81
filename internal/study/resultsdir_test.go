package study

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/meshbench/meshbench/internal/results"
	"github.com/meshbench/meshbench/internal/results/confined"
)

// interrupted leaves in dir a run of studySource stopped after its first
// cells, as a results directory handed over would be.
func interrupted(t *testing.T, dir string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f := newFake()
	f.onMeasure = func(n int) error {
		if n == 3 {
			cancel()
			return context.Canceled
		}
		return nil
	}
	if _, err := Run(ctx, runOptions(t, studySource, f, dir, nil)); !errors.Is(err, context.Canceled) {
		t.Fatalf("Run: %v, want an interrupt", err)
	}
}

// TestResumeRefusesLinks resumes results directories with a link planted
// where the run writes: each is refused before the platform is opened,
// and what the link points at is unchanged.
func TestResumeRefusesLinks(t *testing.T) {
	t.Parallel()
	for _, name := range []string{results.LogFile, "logs", results.CellsDir, results.PodLogDir, "logs/cells"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join(t.TempDir(), "results")
			interrupted(t, dir)
			victimDir := t.TempDir()
			victim := filepath.Join(victimDir, "victim")
			if err := os.WriteFile(victim, []byte("precious\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			target := victimDir
			if name == results.LogFile {
				target = victim
			}
			if err := os.RemoveAll(filepath.Join(dir, name)); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
				t.Fatal(err)
			}
			st, src, err := LoadRun(dir, PlatformOverride{}, false)
			if err != nil {
				t.Fatal(err)
			}
			f := newFake()
			_, err = Run(context.Background(), Options{Study: st, Source: src, Open: f.open, Dir: dir, Resume: true})
			var le *confined.LinkError
			if !errors.As(err, &le) || !strings.Contains(err.Error(), "refused: a symbolic link") {
				t.Fatalf("Run: %v, want a refused link", err)
			}
			if b, _ := os.ReadFile(victim); string(b) != "precious\n" {
				t.Errorf("the victim is now %q", b)
			}
			if entries, _ := os.ReadDir(victimDir); len(entries) != 1 {
				t.Errorf("the victim's directory holds %d entries, want 1", len(entries))
			}
			if f.measures != 0 {
				t.Errorf("%d cells measured through a link", f.measures)
			}
		})
	}
}

// TestRunRefusesLinksSwappedIn swaps, after the run made them and while
// it measures, a directory the platform writes logs beneath for a link to
// a directory outside, as someone sharing the results directory could:
// every later write of a log is refused, and nothing reaches the
// directory outside.
func TestRunRefusesLinksSwappedIn(t *testing.T) {
	t.Parallel()
	for _, swapped := range []string{"logs", "logs/cells", results.PodLogDir} {
		t.Run(swapped, func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join(t.TempDir(), "results")
			victimDir := t.TempDir()
			f := newFake()
			f.writeLogs = true
			f.onMeasure = func(n int) error {
				if n == 2 {
					if err := os.Rename(filepath.Join(dir, swapped), filepath.Join(t.TempDir(), "moved")); err != nil {
						return err
					}
					return os.Symlink(victimDir, filepath.Join(dir, swapped))
				}
				return nil
			}
			o := runOptions(t, studySource, f, dir, nil)
			var progress bytes.Buffer
			o.Progress = &progress
			ix, err := Run(context.Background(), o)
			// A log kept at Down is refused with a warning.
			refused := err != nil && strings.Contains(err.Error(), "refused: a symbolic link") ||
				strings.Contains(progress.String(), "refused: a symbolic link")
			if ix != nil {
				for _, c := range ix.Cells {
					refused = refused || strings.Contains(c.Reason, "refused: a symbolic link")
				}
			}
			if !refused {
				t.Errorf("Run: %v; no write was refused at the link", err)
			}
			if entries, _ := os.ReadDir(victimDir); len(entries) != 0 {
				t.Errorf("the directory outside now holds %d entries", len(entries))
			}
		})
	}
}

// TestSecondRunRefused starts a second run, resumed or with the same
// --out, while a first, resumed, writes into the directory: each is
// refused with the first one named, and the first finishes.
func TestSecondRunRefused(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "results")
	interrupted(t, dir)
	started, release := make(chan struct{}), make(chan struct{})
	f := newFake()
	f.onMeasure = func(n int) error {
		if n == 1 {
			close(started)
			<-release
		}
		return nil
	}
	first := runOptions(t, studySource, f, dir, nil)
	first.Resume, first.Command = true, []string{"meshbench", "run", "--resume", dir}
	done := make(chan error, 1)
	go func() {
		_, err := Run(context.Background(), first)
		done <- err
	}()
	<-started
	for _, resume := range []bool{true, false} {
		o := runOptions(t, studySource, newFake(), dir, nil)
		o.Resume, o.Command = resume, []string{"meshbench", "second"}
		_, err := Run(context.Background(), o)
		var le *results.LockedError
		if !errors.As(err, &le) || le.Holder == nil || le.Holder.PID != os.Getpid() {
			t.Errorf("resume=%v: %v, want the directory locked by this process", resume, err)
			continue
		}
		if !strings.Contains(err.Error(), "in use by another meshbench run: pid ") || !strings.Contains(err.Error(), "(meshbench run --resume "+dir+"), since ") {
			t.Errorf("resume=%v: %v does not name the first run", resume, err)
		}
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatalf("the first run: %v", err)
	}
	if ix, err := results.ReadIndex(dir); err != nil || !ix.Complete || len(ix.Cells) != 12 {
		t.Fatalf("the first run's index: %v", err)
	}
}

// TestKillAtEveryWriteIsResumable stops a run at each write step of
// making its results directory and of its first cell, as a kill there
// would, and resumes it: every one completes with every cell once.
func TestKillAtEveryWriteIsResumable(t *testing.T) {
	// Not parallel: confined.Hook is the package's.
	var steps []string
	confined.Hook = func(step string) error {
		steps = append(steps, step)
		return nil
	}
	t.Cleanup(func() { confined.Hook = nil })
	run(t, runOptions(t, studySource, newFake(), filepath.Join(t.TempDir(), "results"), nil))
	// The directory's making, through the first cell's index entry.
	last := -1
	for i, s := range steps {
		if strings.HasPrefix(s, "create "+results.CellsDir+"/") {
			last = i + 3
			break
		}
	}
	if last < 0 || last >= len(steps) {
		t.Fatalf("no cell written in the steps %v", steps)
	}
	steps = steps[:last+1]
	killed := errors.New("killed")
	for i, step := range steps {
		dir := filepath.Join(t.TempDir(), "results")
		n := 0
		confined.Hook = func(string) error {
			if n++; n == i+1 {
				return killed
			}
			return nil
		}
		if _, err := Run(context.Background(), runOptions(t, studySource, newFake(), dir, nil)); !errors.Is(err, killed) {
			t.Fatalf("killed at %s: Run returned %v", step, err)
		}
		confined.Hook = nil
		if _, err := os.Stat(dir); err != nil {
			// Killed before the directory was made: nothing to resume, and
			// a new run into it starts.
			run(t, runOptions(t, studySource, newFake(), dir, nil))
			continue
		}
		if exists(dir, results.IndexFile) && !exists(dir, results.StudyFile) {
			// `meshbench run --resume DIR` names the fix: the study file.
			if _, _, err := LoadRun(dir, PlatformOverride{}, false); err == nil || !strings.Contains(err.Error(), "meshbench run FILE --resume "+dir) {
				t.Errorf("killed at %s: LoadRun: %v, want the study file asked for", step, err)
			}
		} else if exists(dir, results.StudyFile) {
			if _, _, err := LoadRun(dir, PlatformOverride{}, false); err != nil {
				t.Errorf("killed at %s: LoadRun: %v", step, err)
			}
		}
		o := runOptions(t, studySource, newFake(), dir, nil)
		o.Resume = true
		ix, err := Run(context.Background(), o)
		if err != nil {
			t.Errorf("killed at %s (step %d): resume: %v", step, i+1, err)
			continue
		}
		seen := map[string]bool{}
		for _, c := range ix.Cells {
			seen[c.ID] = true
		}
		if !ix.Complete || len(ix.Cells) != 12 || len(seen) != 12 {
			t.Errorf("killed at %s: resumed to complete=%v with %d cells (%d distinct)", step, ix.Complete, len(ix.Cells), len(seen))
		}
		for _, name := range []string{results.StudyFile, results.GraphFile, results.LogFile} {
			if !exists(dir, name) {
				t.Errorf("killed at %s: no %s after the resume", step, name)
			}
		}
	}
	t.Logf("%d kill points: %s", len(steps), strings.Join(steps, ", "))
}

// TestLoadRunFindsThePreset: a run of a built-in study stopped before its
// study file was written is resumed from the built-in, found by its hash.
func TestLoadRunFindsThePreset(t *testing.T) {
	t.Parallel()
	src, err := PresetSource(DefaultPreset)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	sum := sha256Hex(src)
	if err := results.WriteJSON(dir, results.IndexFile, &results.Index{Schema: results.SchemaVersion, StudyHash: sum}); err != nil {
		t.Fatal(err)
	}
	st, got, err := LoadRun(dir, PlatformOverride{}, false)
	if err != nil || !bytes.Equal(got, src) || st.SHA256 != sum {
		t.Fatalf("LoadRun: %v", err)
	}
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// TestResumeRefusesAnotherPlatform resumes a run with another Envoy: it
// is refused before the platform comes up, unless ResumeAnyway, when the
// cells measured then record the platform they ran on.
func TestResumeRefusesAnotherPlatform(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "results")
	interrupted(t, dir)
	before, err := results.ReadIndex(dir)
	if err != nil {
		t.Fatal(err)
	}
	f := newFake()
	f.envoy = "1.41.0"
	o := runOptions(t, studySource, f, dir, nil)
	o.Resume = true
	_, err = Run(context.Background(), o)
	if err == nil || !strings.Contains(err.Error(), "not the experiment the run started: Envoy 1.41.0, was 1.40.0") || !strings.Contains(err.Error(), "--resume-anyway") {
		t.Fatalf("Run: %v, want the other Envoy refused", err)
	}
	if f.count("up") != 0 || f.measures != 0 {
		t.Fatalf("a refused resume brought the platform up (%d) or measured (%d)", f.count("up"), f.measures)
	}
	o.ResumeAnyway = true
	ix := run(t, o)
	if !ix.Complete || ix.Provenance.Platform.EnvoyVersion != "1.40.0" {
		t.Fatalf("complete %v, index provenance %+v: want the run's first platform kept", ix.Complete, ix.Provenance.Platform)
	}
	for _, c := range ix.Cells {
		first := slices.ContainsFunc(before.Cells, func(s results.Summary) bool { return s.ID == c.ID })
		switch {
		case first && c.Platform != nil:
			t.Errorf("cell %s, measured before the resume, records %+v", c.ID, c.Platform)
		case !first && (c.Platform == nil || c.Platform.EnvoyVersion != "1.41.0"):
			t.Errorf("cell %s, measured after the resume, records %+v", c.ID, c.Platform)
		}
	}
}
