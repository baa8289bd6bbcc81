package dataplane

import (
	"bytes"
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

	"golang.org/x/sys/unix"
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
// added after. The logs are in the proxies' directories, which belong to
// the proxies' user: each is read as a plain file only (openLog), and at
// most maxLogRead of it a poll.
type logTail map[string]int64

// maxLogRead bounds what one poll reads of a log: a probe's lines are a
// few hundred bytes, and a file grown past that by the time it is read is
// read on at the next poll, never whole.
const maxLogRead = 1 << 20

// openLog opens a log in a proxy's directory with flag, refusing a link,
// a FIFO, a device or a file with other hard links: the directory is the
// proxies' user's, who could plant one where meshbench, as root, reads or
// empties the log. The directories above it are root's, so the last
// component is the only one to open without following.
func openLog(path string, flag int) (*os.File, error) {
	fd, err := unix.Open(path, flag|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	f := os.NewFile(uintptr(fd), path)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		f.Close()
		return nil, &os.PathError{Op: "stat", Path: path, Err: err}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG || st.Nlink != 1 {
		f.Close()
		return nil, fmt.Errorf("%s: refused: not a plain file of its own (mode %o, %d links)", path, st.Mode, st.Nlink)
	}
	return f, nil
}

func markLogs(paths ...string) logTail {
	t := logTail{}
	for _, p := range paths {
		t[p] = 0
		if f, err := openLog(p, os.O_RDONLY); err == nil {
			if st, err := f.Stat(); err == nil {
				t[p] = st.Size()
			}
			f.Close()
		}
	}
	return t
}

// read returns the whole lines added to the log at p since the last read,
// at most maxLogRead of them, and moves the mark past them. A log emptied
// since (boundLogs) is read from its start.
func (t logTail) read(p string, buf []byte) []byte {
	f, err := openLog(p, os.O_RDONLY)
	if err != nil {
		return nil
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil
	}
	off := t[p]
	if st.Size() < off {
		off = 0
	}
	n, _ := f.ReadAt(buf[:min(int64(len(buf)), st.Size()-off)], off)
	b := buf[:n]
	if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
		b = b[:i+1]
	} else if n < len(buf) {
		b = nil // a line still being written: read it whole next time
	}
	t[p] = off + int64(len(b))
	return b
}

// waitLine polls the files (Envoy flushes access logs every second) for
// a new line about the probe (relevant) whose peer is want. Lines about
// the probe with another peer make the error say what was seen.
func (t logTail) waitLine(ctx context.Context, relevant func(string) bool, want string) error {
	deadline := time.Now().Add(3 * time.Second)
	buf := make([]byte, maxLogRead)
	var seen []string
	for {
		for p := range t {
			for _, line := range strings.Split(string(t.read(p, buf)), "\n") {
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
