package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/meshbench/meshbench/internal/results/resultstest"
)

// TestHistoryCheckExitCodes runs the CI gate end to end, as a job would:
// `history add` the runs, then `history check`. One release measured
// seven times passes (exit 0); the same three runs, then four in which
// the sidecar runs 30% slower under a newer Envoy, fail it with the
// regression code, naming the release.
func TestHistoryCheckExitCodes(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	write := func(name string, i int, release string, slow float64) string {
		dir := filepath.Join(root, fmt.Sprintf("%s-%d", name, i))
		o := resultstest.Options{Seed: uint64(1 + i), Start: resultstest.Start.Add(time.Duration(i) * 24 * time.Hour), Requests: 1200, EnvoyRelease: release}
		if slow > 0 {
			o.Slowdown = map[string]float64{resultstest.Sidecar: slow}
		}
		if _, err := resultstest.Write(dir, o); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	var aa, step []string
	for i := range 7 {
		aa = append(aa, write("aa", i, "1.39.1", 0))
		if i < 3 {
			step = append(step, aa[i])
		} else {
			step = append(step, write("step", i, "1.39.3", 1.3))
		}
	}
	main := func(args ...string) (int, string) {
		var out, errOut bytes.Buffer
		code := Main(context.Background(), Streams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}, args)
		return code, out.String() + errOut.String()
	}
	for _, tc := range []struct {
		name string
		dirs []string
		want int
		says string
	}{
		{"A/A", aa, ExitOK, "no regression"},
		{"injected step", step, ExitRegression, "REGRESSION bookinfo: sidecar"},
	} {
		db := filepath.Join(t.TempDir(), "history.db")
		if code, out := main(append([]string{"history", "add", "--history", db}, tc.dirs...)...); code != 0 {
			t.Fatalf("%s: history add: exit %d\n%s", tc.name, code, out)
		}
		// The four step runs are the newest: a CI job adds them and checks.
		code, out := main("history", "check", "--history", db, "--new", "4")
		if code != tc.want || !strings.Contains(out, tc.says) {
			t.Errorf("%s: history check exits %d, want %d saying %q:\n%s", tc.name, code, tc.want, tc.says, out)
		}
		if tc.want == ExitRegression && !strings.Contains(out, "Envoy 1.39.1 → 1.39.3") {
			t.Errorf("%s: the regression does not say what changed:\n%s", tc.name, out)
		}
		code, js := main("history", "check", "--history", db, "--new", "4", "-o", "json")
		var v struct {
			Regressions []struct {
				Change struct {
					Regression bool `json:"regression"`
				} `json:"change_point"`
			} `json:"regressions"`
		}
		if err := json.Unmarshal([]byte(js[:strings.LastIndex(js, "}")+1]), &v); err != nil || code != tc.want || (len(v.Regressions) > 0) != (tc.want == ExitRegression) {
			t.Errorf("%s: history check -o json: exit %d, %d regressions, %v\n%s", tc.name, code, len(v.Regressions), err, js)
		}
	}
}
