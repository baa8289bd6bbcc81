package cli

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// A fast server meets the SLO up to the highest rate allowed: the search
// prints its trials, grow to confirm, and that rate as the capacity.
func TestLoadFindMax(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "ok")
	}))
	t.Cleanup(srv.Close)
	out, _, err := runCLI(t, "load", "-q", "--find-max", "--slo-p99", "1s", "-c", "4",
		"--start-rate", "500", "--max-rate", "1000", "--warmup", "0s",
		"--trial-duration", "1s", srv.URL)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, want := range []string{
		"p99 <= 1s, errors <= 0.1%",
		"    1  grow",
		"    2  grow",
		"capacity: at least 1000.0 req/s (a bound)",
		"the SLO held at every rate tried, up to 1000 req/s",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// A server answering 503 meets no error limit at any rate.
func TestLoadFindMaxErrorLimit(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	t.Cleanup(srv.Close)
	out, _, err := runCLI(t, "load", "-q", "--find-max", "--slo-p99", "1s", "-c", "2", "--start-rate", "1000",
		"--warmup", "0s", "--trial-duration", "200ms", srv.URL)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !strings.Contains(out, "no capacity: the SLO is not met even at") || !strings.Contains(out, "fail: errors") {
		t.Errorf("a server answering 503 has no capacity at errors <= 0.1%%:\n%s", out)
	}
}

func TestLoadFindMaxFlags(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--find-max", "http://127.0.0.1:1/"}, "--slo-p99"},
		{[]string{"--find-max", "--slo-p99", "10ms", "--rate", "10", "http://127.0.0.1:1/"}, "--rate does not apply"},
		{[]string{"--find-max", "--slo-p99", "10ms", "--precision", "5", "http://127.0.0.1:1/"}, "precision"},
	} {
		_, _, err := runCLI(t, append([]string{"load", "-q"}, tc.args...)...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want one naming %q", tc.args, err, tc.want)
		}
	}
}
