package kube

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/meshbench/meshbench/internal/load"
	"github.com/meshbench/meshbench/internal/metrics"
)

// logNamespaces are the namespaces whose generator containers kwok gives
// a log: a load result, as `meshbench load --output json` writes it (the
// outside generators' namespace among them). Elsewhere (ns-3, the probe
// namespace) a generator's log cannot be read.
var logNamespaces = []string{"ns-1", "ns-2", outsideNamespace}

// writeGeneratorLogs writes the result every simulated generator reports,
// in the CRI log format kwok serves, and the kwok configuration that
// serves it; it returns the configuration's path.
func (c *testCluster) writeGeneratorLogs() (string, error) {
	start := time.Now().Add(-time.Minute).UTC().Truncate(time.Millisecond)
	r := &load.Result{
		Options: load.Options{URL: "http://tier-1-app-a.ns-1:8080/", Method: "GET", Rate: 10, Connections: 1, Duration: 2 * time.Second},
		Start:   start, End: start.Add(2 * time.Second), Requests: 20, StatusCodes: map[int]int64{200: 20},
		Latency: metrics.NewHistogram(), SendLag: metrics.NewHistogram(), ByClass: map[string]*metrics.Histogram{"2xx": metrics.NewHistogram()},
	}
	for i := range 20 {
		d := time.Duration(1000+100*i) * time.Microsecond
		r.Latency.Record(d)
		r.ByClass["2xx"].Record(d)
	}
	c.GeneratorResult = r
	var report bytes.Buffer
	if err := load.WriteJSON(&report, r); err != nil {
		return "", err
	}
	var cri strings.Builder
	for _, line := range strings.Split(strings.TrimRight(report.String(), "\n"), "\n") {
		fmt.Fprintf(&cri, "%s stdout F %s\n", start.Format(time.RFC3339Nano), line)
	}
	logPath := filepath.Join(c.Dir, "generator.log")
	if err := os.WriteFile(logPath, []byte(cri.String()), 0o644); err != nil {
		return "", err
	}
	cfg := fmt.Sprintf(`apiVersion: kwok.x-k8s.io/v1alpha1
kind: ClusterLogs
metadata: {name: meshbench-generators}
spec:
  selector: {matchNamespaces: [%s]}
  logs:
  - containers: [%s, %s]
    logsFile: %q
`, strings.Join(logNamespaces, ", "), jobContainer, controlContainer, logPath)
	path := filepath.Join(c.Dir, "kwok-logs.yaml")
	return path, os.WriteFile(path, []byte(cfg), 0o644)
}
