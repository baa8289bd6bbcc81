package dataplane

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"syscall"
	"time"
)

// probeTimeout bounds one verification request.
const probeTimeout = 5 * time.Second

// request is one verification request: from a network namespace to an
// address, as an app there would send it.
type request struct {
	Netns  string
	Addr   string // ip:port dialled
	Host   string
	Path   string
	Header map[string]string
}

// get sends the request on a fresh connection and returns the status. An
// error means no HTTP response came back at all (refused, reset, closed).
func (in *Installation) get(ctx context.Context, r request) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	tr := &http.Transport{
		DisableKeepAlives: true,
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return in.c.Dial(ctx, r.Netns, r.Addr)
		},
	}
	defer tr.CloseIdleConnections()
	path := r.Path
	if path == "" {
		path = "/"
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+r.Addr+path, nil)
	if err != nil {
		return 0, err
	}
	if r.Host != "" {
		req.Host = r.Host
	}
	for k, v := range r.Header {
		req.Header.Set(k, v)
	}
	resp, err := tr.RoundTrip(req)
	if errors.Is(err, syscall.EADDRNOTAVAIL) {
		return 0, fmt.Errorf("%w: %w", errNoLocalPort, err)
	}
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, nil
}

// errNoLocalPort is a probe that could not connect because its pod had
// used up its ephemeral ports to the address (a generator's connections
// in TIME_WAIT): the pod's limit, which says nothing of the data plane.
var errNoLocalPort = errors.New("the calling pod had no free local port (EADDRNOTAVAIL), its own limit and not the data plane's")

func ok(status int) bool { return status >= 200 && status < 400 }

// nonce is a random probe identifier.
func nonce() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// logTail remembers where a set of log files ended, to read what a probe
// added after.
type logTail map[string]int64

func markLogs(paths ...string) logTail {
	t := logTail{}
	for _, p := range paths {
		if st, err := os.Stat(p); err == nil {
			t[p] = st.Size()
		} else {
			t[p] = 0
		}
	}
	return t
}

// waitLine polls the files (Envoy flushes access logs every second) for
// a new line about the probe (relevant) whose peer is want. Lines about
// the probe with another peer make the error say what was seen.
func (t logTail) waitLine(ctx context.Context, relevant func(string) bool, want string) error {
	deadline := time.Now().Add(3 * time.Second)
	for {
		var seen []string
		for p, off := range t {
			b, err := os.ReadFile(p)
			if err != nil || int64(len(b)) <= off {
				continue
			}
			for _, line := range strings.Split(string(b[off:]), "\n") {
				if line == "" || !relevant(line) {
					continue
				}
				if peer := field(line, "peer"); peer == want {
					return nil
				} else if !slices.Contains(seen, peer) {
					seen = append(seen, peer)
				}
			}
		}
		if time.Now().After(deadline) {
			if len(seen) > 0 {
				return fmt.Errorf("peer certificate carries %s, want %q", strings.Join(seen, ", "), want)
			}
			return fmt.Errorf("the destination logged no connection for the call")
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// field returns a key=value field of an access-log line.
func field(line, key string) string {
	for _, f := range strings.Fields(line) {
		if v, ok := strings.CutPrefix(f, key+"="); ok {
			return v
		}
	}
	return ""
}
