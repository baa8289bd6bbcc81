package dashboard

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/meshbench/meshbench/internal/history"
	"github.com/meshbench/meshbench/internal/results/resultstest"
)

// The fixture history: seven runs of one study, the sidecar 40% slower
// from the fourth on, under a newer Envoy (three runs before a step and
// four after it are enough for the permutation test to call it).
const (
	fixtureRuns = 7
	stepAt      = 3
)

var (
	fixtureOnce sync.Once
	fixtureDir  string
	fixtureErr  error
	fixtureDB   *history.Store
)

func TestMain(m *testing.M) {
	code := m.Run()
	if fixtureDB != nil {
		fixtureDB.Close()
	}
	if fixtureDir != "" {
		os.RemoveAll(fixtureDir)
	}
	os.Exit(code)
}

// fixture writes the runs' results directories once and returns a new
// history holding them, and the directories.
func fixture(t *testing.T) (*history.Store, []string) {
	t.Helper()
	fixtureOnce.Do(func() {
		if fixtureDir, fixtureErr = os.MkdirTemp("", "meshbench-dashboard-test-"); fixtureErr != nil {
			return
		}
		for i := range fixtureRuns {
			// An open loop, whose added p50 the front page shows (a
			// closed loop records none).
			o := resultstest.Options{Seed: uint64(i + 1), Start: resultstest.Start.Add(time.Duration(i) * 24 * time.Hour), Requests: 1200, EnvoyRelease: "1.39.1", Rate: 100}
			if i >= stepAt {
				o.EnvoyRelease, o.Slowdown = "1.39.3", map[string]float64{resultstest.Sidecar: 1.4}
			}
			if _, fixtureErr = resultstest.Write(fixtureRun(i), o); fixtureErr != nil {
				return
			}
		}
		if fixtureDB, fixtureErr = history.Open(context.Background(), filepath.Join(fixtureDir, "history.db")); fixtureErr != nil {
			return
		}
		_, fixtureErr = history.AddDirs(context.Background(), fixtureDB, fixtureDirs(), nil)
	})
	if fixtureErr != nil {
		t.Fatal(fixtureErr)
	}
	return fixtureDB, fixtureDirs()
}

func fixtureRun(i int) string { return filepath.Join(fixtureDir, fmt.Sprintf("run-%d", i)) }

func fixtureDirs() []string {
	var dirs []string
	for i := range fixtureRuns {
		dirs = append(dirs, fixtureRun(i))
	}
	return dirs
}

func get(t *testing.T, h http.Handler, target string) (int, http.Header, string) {
	t.Helper()
	req := httptest.NewRequest("GET", target, nil)
	req.Host = "127.0.0.1:8089"
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	b, _ := io.ReadAll(w.Result().Body)
	return w.Code, w.Result().Header, string(b)
}

var (
	chartRE  = regexp.MustCompile(`<svg [^>]*class="chart"`)
	markerRE = regexp.MustCompile(`<g class="marker"><title>([^<]*)</title>`)
	runRowRE = regexp.MustCompile(`<a class="report" href="/runs/([0-9a-f]{16})/report">`)
)

func TestPages(t *testing.T) {
	st, dirs := fixture(t)
	h := New(st, nil)

	code, hdr, body := get(t, h, "/")
	if code != 200 {
		t.Fatalf("/: %d\n%s", code, body)
	}
	if csp := hdr.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") {
		t.Errorf("/: policy %q lets the page load from elsewhere", csp)
	}
	runs := runRowRE.FindAllStringSubmatch(body, -1)
	if len(runs) != fixtureRuns {
		t.Errorf("/ lists %d runs, want %d", len(runs), fixtureRuns)
	}
	charts := len(chartRE.FindAllString(body, -1))
	markers := markerRE.FindAllStringSubmatch(body, -1)
	if charts < 3*len(DefaultMetrics) {
		t.Errorf("/ draws %d charts, want a series per mesh and configuration of %d metrics", charts, len(DefaultMetrics))
	}
	steps := 0
	for _, m := range markers {
		if strings.Contains(m[1], "from 1.39.3") && strings.HasPrefix(m[1], "+") {
			steps++
		}
	}
	if steps == 0 {
		t.Errorf("no chart marks the sidecar's step from 1.39.3; markers: %v", markers)
	}
	t.Logf("/: %d runs, %d charts, %d change points marked (%d at the step)", len(runs), charts, len(markers), steps)
	if strings.Contains(body, "<script") || regexp.MustCompile(`(src|href)="https?://`).MatchString(body) {
		t.Error("/ has a script or an external asset")
	}

	// A series in detail: its points and change points, for a sidecar
	// series whose step the front page marks.
	var link string
	for _, sec := range strings.Split(body, `<section class="series"`)[1:] {
		if m := regexp.MustCompile(`<a href="(/series\?id=[^"]+)">[^<]*sidecar, (?:added )?p50`).FindStringSubmatch(sec); m != nil && strings.Contains(sec, "from 1.39.3</title>") {
			link = strings.ReplaceAll(m[1], "&amp;", "&")
			break
		}
	}
	if link == "" {
		t.Fatal("/ marks the step in no sidecar p50 series")
	}
	code, _, detail := get(t, h, link)
	if code != 200 || strings.Count(detail, `<tr><td class="num">`) != fixtureRuns || !strings.Contains(detail, "Envoy 1.39.1 → 1.39.3") {
		t.Errorf("series page %s: %d, want its %d points and the change point naming the release\n%s", link, code, fixtureRuns, detail)
	}

	// Run against run: the report's comparison, from the raw data.
	a, b := runs[0][1], runs[fixtureRuns-1][1]
	code, _, cmp := get(t, h, "/compare?a="+a+"&b="+b)
	if code != 200 || !strings.Contains(cmp, "Content-Security-Policy") || !strings.Contains(strings.ToLower(cmp), "worse") {
		t.Errorf("/compare: %d, want the report's comparison\n%.2000s", code, cmp)
	}

	// Each run's report.
	code, _, rep := get(t, h, "/runs/"+a+"/report")
	if code != 200 || !strings.Contains(rep, `id="verdict"`) {
		t.Errorf("/runs/%s/report: %d, want the run's report\n%.2000s", a, code, rep)
	}
	if code, _, _ := get(t, h, "/runs/0000000000000000/report"); code != 404 {
		t.Errorf("an unknown run's report: %d, want 404", code)
	}

	// A run whose directory is gone: the history's figures stand in for
	// the comparison, and its report says why it cannot be made.
	gone := filepath.Join(t.TempDir(), "moved")
	if err := os.Rename(dirs[0], gone); err != nil {
		t.Fatal(err)
	}
	defer os.Rename(gone, dirs[0])
	code, _, cmp = get(t, h, "/compare?a="+a+"&b="+b)
	if code != 200 || !strings.Contains(cmp, "needs both results directories") || !strings.Contains(cmp, `<table id="compare">`) {
		t.Errorf("/compare without A's directory: %d\n%.2000s", code, cmp)
	}
	if code, _, body := get(t, h, "/runs/"+a+"/report"); code != 404 || !strings.Contains(body, dirs[0]) {
		t.Errorf("the report of a run whose directory is gone: %d, want 404 naming the directory\n%s", code, body)
	}
}

func TestLoopbackOnly(t *testing.T) {
	st, _ := fixture(t)
	h := New(st, nil)
	req := httptest.NewRequest("GET", "/", nil)
	req.Host = "attacker.example:8089"
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	if w.Code != http.StatusMisdirectedRequest {
		t.Errorf("a request for another host name: %d, want 421", w.Code)
	}
	for _, addr := range []string{"0.0.0.0:8089", "192.0.2.1:80", "example.com:80", "8089"} {
		if err := Serve(context.Background(), h, addr, nil); err == nil || !strings.Contains(err.Error(), "--listen") {
			t.Errorf("Serve(%s): %v, want a refusal", addr, err)
		}
	}
}
