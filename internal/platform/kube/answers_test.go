package kube

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// hostileSize is more than any answer meshbench reads from a cluster
// may be: a cluster's contents are untrusted, and a pod's log, a proxy's
// metrics or a Prometheus can answer without end.
const hostileSize = 80 << 20

// endless writes prefix, then hostileSize bytes of filler (blanks, which
// JSON and Prometheus's text format skip), then suffix.
func endless(w io.Writer, prefix, filler, suffix string) {
	io.WriteString(w, prefix)
	chunk := strings.Repeat(filler, (64<<10)/len(filler))
	for n := 0; n < hostileSize; n += len(chunk) {
		if _, err := io.WriteString(w, chunk); err != nil {
			return
		}
	}
	io.WriteString(w, suffix)
}

// TestClusterAnswersAreBounded has a cluster answer each read meshbench
// makes with more than it may read, each answer valid once whole: every
// read is refused, naming the bound, rather than read to its end.
func TestClusterAnswersAreBounded(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/api/v1/namespaces/ns-1/pods/load-x/log":
			endless(w, "", "a log line\n", `{"requests":1}`+"\n")
		case "/apis/metrics.k8s.io/v1beta1/namespaces/ns-1/pods":
			w.Header().Set("Content-Type", "application/json")
			endless(w, `{"kind":"PodMetricsList","items":[`, " ", "]}")
		case "/api/v1/namespaces/ns-1/pods/http:load-x:15090/proxy/stats/prometheus":
			endless(w, "", "# a comment line\n", "istio_requests_total 1\n")
		case "/api/v1/query":
			endless(w, `{"status":"success","data":{"resultType":"matrix","result":[`, " ", "]}}")
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	p := platformFor(t, srv.URL, Options{})
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns-1", Name: "load-x"}}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	reads := map[string]func() error{
		"pod log": func() error {
			_, err := p.readResult(ctx, jobSpec{Namespace: "ns-1", Name: "load", Component: componentLoad}, pod, jobContainer, "completed")
			return err
		},
		"metrics API": func() error {
			_, err := p.podMetrics(ctx, "ns-1")
			return err
		},
		"proxy metrics": func() error {
			_, err := p.readEvidence(ctx, pod, istioEvidence(15090, "/stats/prometheus", "istio_requests_total"), "ns-1")
			return err
		},
		"Prometheus": func() error {
			_, err := promGet(ctx, srv.URL+"/api/v1/query")
			return err
		},
	}
	for name, read := range reads {
		err := read()
		if err == nil || !strings.Contains(err.Error(), "bytes, more than meshbench reads") {
			t.Errorf("%s: %v, want the answer refused at its bound", name, err)
		}
	}
}

// TestBoundedReaderKeepsWhatFits: an answer within its bound is read
// whole.
func TestBoundedReaderKeepsWhatFits(t *testing.T) {
	t.Parallel()
	b, err := io.ReadAll(bounded(strings.NewReader("0123456789"), 10, "a test answer"))
	if err != nil || string(b) != "0123456789" {
		t.Fatalf("ReadAll = %q, %v", b, err)
	}
	_, err = io.ReadAll(bounded(strings.NewReader("0123456789x"), 10, "a test answer"))
	if want := fmt.Sprintf("a test answer: more than 10 bytes, more than meshbench reads from it"); err == nil || err.Error() != want {
		t.Fatalf("ReadAll = %v, want %q", err, want)
	}
}
