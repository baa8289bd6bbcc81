package kube

import (
	"context"
	"fmt"
	"io"

	"k8s.io/client-go/rest"
)

// Bounds on what meshbench reads of one answer from a cluster, whose
// contents are untrusted: a pod can log, a proxy can report, and a
// Prometheus or an aggregated API can answer without end. An answer over
// its bound is refused, not cut and used.
const (
	// maxJobLog bounds a generator pod's log: its result (a few hundred
	// KB of histograms at most) after its warnings.
	maxJobLog = 64 << 20
	// maxMetricsList bounds one namespace's PodMetricsList: about 500
	// bytes a pod, and a namespace holds at most 3,000 pods (Kubernetes's
	// scalability threshold).
	maxMetricsList = 16 << 20
	// maxProxyStats bounds one proxy's metrics page: Envoy's run to a few
	// MB with many clusters.
	maxProxyStats = 64 << 20
	// maxPrometheusAnswer bounds one range query's answer: about 25
	// bytes a sample, so 64 MiB holds 1,000 containers scraped every 15 s
	// for 10 hours.
	maxPrometheusAnswer = 64 << 20
)

// boundedReader fails a read past its bound with an error naming what it
// reads.
type boundedReader struct {
	r           io.Reader
	limit, read int64
	what        string
}

// bounded reads r, failing once it gives more than limit bytes.
func bounded(r io.Reader, limit int64, what string) io.Reader {
	return &boundedReader{r: r, limit: limit, what: what}
}

func (b *boundedReader) Read(p []byte) (int, error) {
	if b.read > b.limit {
		return 0, b.tooLarge()
	}
	// One byte past the bound is asked for, to tell an answer of exactly
	// limit bytes from a longer one.
	if left := b.limit + 1 - b.read; int64(len(p)) > left {
		p = p[:left]
	}
	n, err := b.r.Read(p)
	b.read += int64(n)
	if b.read > b.limit {
		return n - 1, b.tooLarge()
	}
	return n, err
}

func (b *boundedReader) tooLarge() error {
	return fmt.Errorf("%s: more than %d bytes, more than meshbench reads from it", b.what, b.limit)
}

// readStream reads the answer to req, refusing one of more than limit
// bytes; what names it in that error.
func readStream(ctx context.Context, req *rest.Request, limit int64, what string) ([]byte, error) {
	rc, err := req.Stream(ctx)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return io.ReadAll(bounded(rc, limit, what))
}
