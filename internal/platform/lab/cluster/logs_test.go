package cluster

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/meshbench/meshbench/internal/results/confined"
	"github.com/meshbench/meshbench/internal/results/resultstest"
)

func TestCopyCapped(t *testing.T) {
	t.Parallel()
	big := bytes.Repeat([]byte("0123456789abcdef"), 2*keptLogLimit/16) // 2 MiB
	tests := []struct {
		name string
		in   []byte
	}{
		{name: "empty"},
		{name: "small", in: []byte("started, pid 42\nexited: exit status 1\n")},
		{name: "at the limit", in: big[:keptLogLimit]},
		{name: "over the limit", in: big},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var out bytes.Buffer
			if err := copyCapped(&out, bytes.NewReader(tt.in), int64(len(tt.in))); err != nil {
				t.Fatal(err)
			}
			got := out.Bytes()
			if len(tt.in) <= keptLogLimit {
				if !bytes.Equal(got, tt.in) {
					t.Errorf("a log within the limit was changed: %d bytes in, %d out", len(tt.in), len(got))
				}
				return
			}
			tail := keptLogLimit - keptLogHead
			note := got[keptLogHead : len(got)-tail]
			switch {
			case len(got) > keptLogLimit+200:
				t.Errorf("kept %d bytes of %d, want about %d", len(got), len(tt.in), keptLogLimit)
			case !bytes.Equal(got[:keptLogHead], tt.in[:keptLogHead]):
				t.Error("the log's start is not kept")
			case !bytes.Equal(got[len(got)-tail:], tt.in[len(tt.in)-tail:]):
				t.Error("the log's end is not kept")
			case !strings.Contains(string(note), "1048576 bytes of this log left out"):
				t.Errorf("no note of what was left out: %q", note)
			}
		})
	}
}

func TestKeepLog(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src := filepath.Join(dir, "ns-1_app-0.log")
	if err := os.WriteFile(src, []byte("first lab\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	keptDir := confined.Dir{Root: dir, Name: "kept"}
	kept := filepath.Join(dir, "kept", "ns-1_app-0.log")
	// Down adds to a kept log, after a separator.
	for range 2 {
		if err := keepLog(src, keptDir, "ns-1_app-0.log", os.O_APPEND, "==== sep ====\n"); err != nil {
			t.Fatal(err)
		}
	}
	if b, _ := os.ReadFile(kept); string(b) != "first lab\n==== sep ====\nfirst lab\n" {
		t.Errorf("kept log %q", b)
	}
	// A copy for one measurement replaces what was there.
	if err := keepLog(src, keptDir, "ns-1_app-0.log", os.O_TRUNC, ""); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(kept); string(b) != "first lab\n" {
		t.Errorf("replaced log %q", b)
	}
	if err := keepLog(filepath.Join(dir, "missing.log"), keptDir, "ns-1_app-0.log", os.O_TRUNC, ""); err == nil {
		t.Error("copying a missing log did not fail")
	}
}

func TestLogPath(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		cfg  Config
		want string
	}{
		{name: "live, until Down", cfg: Config{StateDir: "/run/meshbench/x"}, want: "/run/meshbench/x/logs/ns-1_web-0.log"},
		{name: "kept by Down", cfg: Config{StateDir: "/run/meshbench/x", KeepLogDir: confined.Dir{Root: "res", Name: "logs/pods"}}, want: "res/logs/pods/ns-1_web-0.log"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			l := &Lab{cfg: tt.cfg}
			if got := l.LogPath("ns-1", "web-0"); got != tt.want {
				t.Errorf("LogPath %q, want %q", got, tt.want)
			}
		})
	}
}

// TestKeepLogRefusesLinkSwappedIn: the results' logs/pods, or logs, is
// swapped for a link after the run made it, as someone sharing the
// results could: keeping a pod's log there is refused, and nothing is
// written where the link points.
func TestKeepLogRefusesLinkSwappedIn(t *testing.T) {
	t.Parallel()
	for _, swapped := range []string{"logs", "logs/pods"} {
		t.Run(swapped, func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			src := filepath.Join(t.TempDir(), "ns-1_app-0.log")
			if err := os.WriteFile(src, []byte("a log\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			victimDir := resultstest.SwapForLink(t, root, "logs/pods", swapped)
			for _, flag := range []int{os.O_APPEND, os.O_TRUNC} {
				err := keepLog(src, confined.Dir{Root: root, Name: "logs/pods"}, "ns-1_app-0.log", flag, "")
				if err == nil || !strings.Contains(err.Error(), "refused: a symbolic link") {
					t.Errorf("keepLog(flag %#x): %v, want the link refused", flag, err)
				}
			}
			if entries, _ := os.ReadDir(victimDir); len(entries) != 0 {
				t.Errorf("the directory outside now holds %d entries", len(entries))
			}
		})
	}
}

// TestLogTailReadsTheEnd: a pod's live log of 10 GB (sparse, as a pod
// that logs without pause, or a file put in its place, could leave) gives
// an error message its last bytes, reading no more of it.
func TestLogTailReadsTheEnd(t *testing.T) {
	t.Parallel()
	l := &Lab{cfg: Config{StateDir: t.TempDir()}}
	path := l.liveLog("ns-1", "web-0")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte("exited: exit status 1\n"), 10<<30); err != nil {
		t.Fatal(err)
	}
	f.Close()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	got := l.logTail("ns-1/web-0")
	runtime.ReadMemStats(&after)
	if !strings.HasSuffix(got, "; log ends: "+strings.Repeat("\x00", 400-22)+"exited: exit status 1\n") {
		t.Errorf("logTail = %.80q..., want the log's last 400 bytes", got)
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 1<<20 {
		t.Errorf("logTail allocated %d bytes, want under 1 MiB", grew)
	}
}
