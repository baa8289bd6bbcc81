package load

import (
	"context"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestLiveProgressAndMetrics(t *testing.T) {
	t.Parallel()
	srv := newCountingServer(t, nil, nil)
	live := &Live{}
	if p := live.Snapshot(); p.Phase != "idle" {
		t.Errorf("phase %q before any run, want idle", p.Phase)
	}
	done := make(chan *Result)
	go func() {
		res, err := Run(context.Background(), Options{URL: srv.URL, Connections: 2, Rate: 200, Duration: time.Second, Timeout: time.Second}, live)
		if err != nil {
			t.Error(err)
		}
		done <- res
	}()
	time.Sleep(500 * time.Millisecond)
	mid := live.Snapshot()
	if mid.Phase != "measure" || mid.Requests == 0 || mid.Requests >= 200 || mid.Elapsed <= 0 {
		t.Errorf("halfway snapshot %+v", mid)
	}
	rec := httptest.NewRecorder()
	live.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(rec.Body)
	for _, want := range []string{
		"# TYPE meshbench_load_requests_total counter",
		`meshbench_load_requests_total{class="2xx"} `,
		`meshbench_load_phase{phase="measure"} 1`,
		"meshbench_load_target_rate 200",
		"meshbench_load_client_cpu_seconds_total ",
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("metrics lack %q:\n%s", want, body)
		}
	}
	res := <-done
	end := live.Snapshot()
	if end.Phase != "done" || end.Requests != res.Requests || end.ByClass["2xx"] != res.StatusCodes[200] {
		t.Errorf("final snapshot %+v, result has %d requests", end, res.Requests)
	}
}
