package study

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/meshbench/meshbench/internal/infra"
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
// where the run writes: each is refused before anything is measured (all
// but logs/cells before the platform is opened), and what the link points
// at is unchanged.
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
			// logs/cells is refused when the first cell's log directory is
			// made, after the platform is opened; the others before.
			if f.count("open") != 0 && name != "logs/cells" || f.measures != 0 {
				t.Errorf("the platform was opened %d times, and %d cells measured, through a link", f.count("open"), f.measures)
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
// refused with the first one named (its pid, host, command and start)
// and the fix, and the first finishes, after which the lock is free.
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
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	for _, resume := range []bool{true, false} {
		o := runOptions(t, studySource, newFake(), dir, nil)
		o.Resume, o.Command = resume, []string{"meshbench", "second"}
		_, err := Run(context.Background(), o)
		var le *results.LockedError
		if !errors.As(err, &le) || le.Holder == nil || le.Holder.PID != os.Getpid() {
			t.Errorf("resume=%v: %v, want the directory locked by this process", resume, err)
			continue
		}
		if le.Holder.Host != host || le.Holder.Start.IsZero() || !slices.Equal(le.Holder.Command, first.Command) {
			t.Errorf("resume=%v: the lock names %+v, want this host %q, a start and the first run's command", resume, le.Holder, host)
		}
		want := fmt.Sprintf("results directory %s is in use by another meshbench run: pid %d on host %s (meshbench run --resume %s), since ", dir, os.Getpid(), host, dir)
		if !strings.HasPrefix(err.Error(), want) || !strings.HasSuffix(err.Error(), "; wait for it to end, or stop it (it can be resumed)") {
			t.Errorf("resume=%v: %v\nwant it to start %q and end with the fix", resume, err, want)
		}
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatalf("the first run: %v", err)
	}
	if ix, err := results.ReadIndex(dir); err != nil || !ix.Complete || len(ix.Cells) != 12 {
		t.Fatalf("the first run's index: %v", err)
	}
	lock, err := results.Acquire(dir, []string{"meshbench", "third"})
	if err != nil {
		t.Fatalf("the lock after the first run ended: %v", err)
	}
	lock.Release()
}

// TestKillAtEveryWriteIsResumable stops a run at each write step of
// making its results directory and of its first cell, as a kill there
// would, and resumes it: every one completes with every cell once. The
// steps are those the doc lists, in its order: the lock, then the index,
// graph.yaml and study.yaml, each created, synced, renamed and its
// directory synced, then the run log and the directories, the index
// twice, the first cell's log directory, its file and the index.
func TestKillAtEveryWriteIsResumable(t *testing.T) {
	// Not parallel: confined.Hook is the package's.
	var steps []string
	confined.Hook = func(step string) error {
		steps = append(steps, step)
		return nil
	}
	t.Cleanup(func() { confined.Hook = nil })
	run(t, runOptions(t, studySource, newFake(), filepath.Join(t.TempDir(), "results"), nil))
	atomic := func(name string) []string {
		return []string{"create " + name, "sync " + name, "rename " + name, "syncdir " + name}
	}
	want := []string{"open " + results.LockFile}
	for _, name := range []string{results.IndexFile, results.GraphFile, results.StudyFile} {
		want = append(want, atomic(name)...)
	}
	want = append(want, "open "+results.LogFile, "mkdir "+results.CellsDir, "mkdir "+results.PodLogDir)
	// The platform is opened, and the index records its facts, then the
	// deployment.
	want = append(want, atomic(results.IndexFile)...)
	want = append(want, atomic(results.IndexFile)...)
	// The directory's making, through the first cell's index entry.
	cell := slices.IndexFunc(steps, func(s string) bool { return strings.HasPrefix(s, "create "+results.CellsDir+"/") })
	if cell < 0 {
		t.Fatalf("no cell written in the steps %v", steps)
	}
	name := strings.TrimPrefix(steps[cell], "create ")
	id := strings.TrimSuffix(strings.TrimPrefix(name, results.CellsDir+"/"), ".json")
	want = append(want, "mkdir "+results.CellLogDir(id))
	want = append(want, atomic(name)...)
	want = append(want, atomic(results.IndexFile)...)
	if len(steps) < len(want) || !slices.Equal(steps[:len(want)], want) {
		t.Fatalf("the run's first steps:\n%s\nwant:\n%s", strings.Join(steps[:min(len(steps), len(want))], "\n"), strings.Join(want, "\n"))
	}
	steps = steps[:len(want)]
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

// TestResumeRefusesAnotherPlatform resumes a run on another host, CPU,
// kernel, Envoy or Kubernetes context: each is refused, naming what
// differs, before the platform comes up; with another Envoy and
// ResumeAnyway it goes on, and the cells measured then record the
// platform they ran on.
func TestResumeRefusesAnotherPlatform(t *testing.T) {
	t.Parallel()
	for _, fact := range []struct {
		name string
		set  func(in *infra.Info, v string)
	}{
		{"host", func(in *infra.Info, v string) { in.Host = v }},
		{"CPU", func(in *infra.Info, v string) { in.CPUModel = v }},
		{"kernel", func(in *infra.Info, v string) { in.Kernel = v }},
		{"Envoy", func(in *infra.Info, v string) { in.EnvoyVersion = v }},
		{"context", func(in *infra.Info, v string) { in.Context = v }},
	} {
		t.Run(fact.name, func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join(t.TempDir(), "results")
			interrupted(t, dir)
			// The run started on one value of the fact (as its index
			// recorded it), and resumes on another.
			ix, err := results.ReadIndex(dir)
			if err != nil {
				t.Fatal(err)
			}
			fact.set(&ix.Provenance.Platform, "was-1")
			if err := results.WriteJSON(dir, results.IndexFile, ix); err != nil {
				t.Fatal(err)
			}
			f := newFake()
			f.info = func(in *infra.Info) { fact.set(in, "now-2") }
			o := runOptions(t, studySource, f, dir, nil)
			o.Resume = true
			_, err = Run(context.Background(), o)
			want := "resume " + dir + ": this is not the experiment the run started: " + fact.name + " now-2, was was-1;"
			if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "--resume-anyway") {
				t.Fatalf("Run: %v, want %q and the flag", err, want)
			}
			if f.count("up") != 0 || f.measures != 0 {
				t.Fatalf("a refused resume brought the platform up (%d) or measured (%d)", f.count("up"), f.measures)
			}
		})
	}
	dir := filepath.Join(t.TempDir(), "results")
	interrupted(t, dir)
	before, err := results.ReadIndex(dir)
	if err != nil {
		t.Fatal(err)
	}
	f := newFake()
	f.info = func(in *infra.Info) { in.EnvoyVersion = "1.41.0" }
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

// TestResumeReadsAreBounded resumes directories whose study.yaml,
// graph.yaml or index someone made a sparse 10 GB file: each is refused
// from its size, naming the file, before any of it is read or the
// platform is opened.
func TestResumeReadsAreBounded(t *testing.T) {
	t.Parallel()
	for _, name := range []string{results.StudyFile, results.GraphFile, results.IndexFile} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join(t.TempDir(), "results")
			interrupted(t, dir)
			if err := os.Truncate(filepath.Join(dir, name), 10<<30); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			st, src, err := LoadRun(dir, PlatformOverride{}, false)
			f := newFake()
			if err == nil {
				_, err = Run(context.Background(), Options{Study: st, Source: src, Open: f.open, Dir: dir, Resume: true})
			}
			want := filepath.Join(dir, name) + ": refused: 10737418240 bytes, more than the"
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Fatalf("resume: %v, want %q", err, want)
			}
			if took := time.Since(start); took > time.Second {
				t.Errorf("refusing took %s: the file was read", took)
			}
			if f.count("open") != 0 {
				t.Error("the platform was opened")
			}
		})
	}
}
