package localkube

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/meshbench/meshbench/internal/testenv"
)

// etcd started as the lab's API server starts it, with a small quota, and
// written to until it refuses: it refuses for the quota (not for want of
// disk), and what its data directory holds then stays within the quota
// and EtcdDiskBound, which is what doctor asks for beside the lab's own.
// The files are listed when it does not, so a new etcd's layout is seen.
func TestIntegrationEtcdStaysWithinItsBound(t *testing.T) {
	testenv.Integration(t)
	testenv.NeedRoot(t)
	bin := BinDir()
	err := CheckBinaries(bin)
	testenv.Need(t, err == nil, "the local control plane's binaries (scripts/k8s-testbin.sh): %v", err)
	dir, err := os.MkdirTemp("", "mb-etcd-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	ns, err := NewNetns()
	if err != nil {
		t.Fatal(err)
	}
	c := &Cluster{Dir: dir, Netns: ns, log: slog.New(slog.DiscardHandler)}
	defer c.Stop(true)
	if err := c.prepare(bin); err != nil {
		t.Fatal(err)
	}
	const quota = 32 << 20
	data := filepath.Join(dir, "etcd")
	if _, err := c.StartProcess("etcd", filepath.Join(bin, "bin", "etcd"), nil, etcdArgs(data, quota)...); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := c.waitHTTP(ctx, "http://127.0.0.1:2379/health", 30*time.Second); err != nil {
		t.Fatal(c.failed("etcd", err))
	}
	hc := c.HTTPClient(10 * time.Second)
	value := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte("x"), 512<<10))
	refused := ""
	for i := 0; i < 4*quota/(512<<10) && refused == ""; i++ {
		key := base64.StdEncoding.EncodeToString(fmt.Appendf(nil, "k%d", i))
		body := `{"key":"` + key + `","value":"` + value + `"}`
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://127.0.0.1:2379/v3/kv/put", strings.NewReader(body))
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || bytes.Contains(b, []byte(`"error"`)) {
			refused = string(b)
		}
	}
	if !strings.Contains(refused, "database space exceeded") {
		t.Fatalf("etcd with a %d MiB quota: writes refused with %q; want the quota's error", quota>>20, refused)
	}
	var used int64
	var files []string
	_ = filepath.Walk(data, func(path string, fi os.FileInfo, err error) error {
		if err == nil {
			b := fi.Sys().(*syscall.Stat_t).Blocks * 512
			used += b
			files = append(files, fmt.Sprintf("%s: %d bytes", strings.TrimPrefix(path, data), b))
		}
		return nil
	})
	bound := EtcdDiskBound(quota)
	if used > bound {
		t.Errorf("etcd's data takes %d bytes with a %d MiB quota; the bound is %d bytes:\n%s", used, quota>>20, bound, strings.Join(files, "\n"))
	}
	t.Logf("etcd's data: %.1f MiB with a %d MiB quota (bound %.1f MiB)", float64(used)/(1<<20), quota>>20, float64(bound)/(1<<20))
}
