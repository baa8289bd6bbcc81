package load

import (
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The errors a dial ends with on the generator's own limits, as the
// net package wraps them and as the loops return them raw.
func TestErrorKindOwnLimits(t *testing.T) {
	t.Parallel()
	dialErr := func(errno syscall.Errno) error {
		return &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", errno)}
	}
	tests := []struct {
		name string
		err  error
		want string
	}{
		{name: "no local port, dialled", err: dialErr(syscall.EADDRNOTAVAIL), want: KindNoPort},
		{name: "no local port, raw", err: syscall.EADDRNOTAVAIL, want: KindNoPort},
		{name: "process out of descriptors", err: &net.OpError{Op: "dial", Err: os.NewSyscallError("socket", syscall.EMFILE)}, want: KindNoFiles},
		{name: "system out of descriptors", err: syscall.ENFILE, want: KindNoFiles},
		{name: "refused is the server's", err: dialErr(syscall.ECONNREFUSED), want: KindRefused},
	}
	for _, tt := range tests {
		if got := errorKind(tt.err); got != tt.want {
			t.Errorf("%s: kind %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestOwnLimit(t *testing.T) {
	t.Parallel()
	start := time.Unix(0, 0)
	tests := []struct {
		name     string
		kinds    map[string]int64
		unopened map[string]int64
		want     []string // in the reason; none: not limited
	}{
		{name: "server errors only", kinds: map[string]int64{KindRefused: 5, KindTimeout: 2}},
		{name: "no local port", kinds: map[string]int64{KindNoPort: 3, KindRefused: 1}, want: []string{"3 requests found no free local port", "not the server's"}},
		{name: "out of descriptors", kinds: map[string]int64{KindNoFiles: 7}, want: []string{"7 requests could not open a socket", "RLIMIT_NOFILE"}},
		// An open loop at slow connections may never send on one it
		// could not open: only the count before the clock shows it.
		{name: "held fewer than asked", unopened: map[string]int64{KindNoFiles: 10000}, want: []string{"10000 of its 30000 connections could not be opened before the clock", "held fewer than asked"}},
		{name: "a refused connection before the clock is the server's", unopened: map[string]int64{KindRefused: 3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Result{Options: Options{Rate: 100, Connections: 30000}, Requests: 1000, AchievedRate: 100, ClientCores: 1, ErrorKinds: tt.kinds, Unopened: tt.unopened}
			r.Start, r.End = start, start.Add(10*time.Second)
			why, own := r.OwnLimit()
			if own != (len(tt.want) > 0) {
				t.Fatalf("own limit %v (%q), want %v", own, why, len(tt.want) > 0)
			}
			for _, w := range tt.want {
				if !strings.Contains(why, w) {
					t.Errorf("reason %q lacks %q", why, w)
				}
			}
			r.assess()
			if r.Distorted != own {
				t.Errorf("distorted %v, want %v: a result on the generator's own limits is the generator's", r.Distorted, own)
			}
			o, _ := Outcome([]Result{r})
			if o.Saturated != own || own && !strings.Contains(o.Reason, "generator 1: ") {
				t.Errorf("outcome saturated %v (%q), want %v: a search must not take the generator's limit for the server's", o.Saturated, o.Reason, own)
			}
		})
	}
}

// A generator whose process runs out of descriptors records its failed
// requests as its own limit: run in a child whose open-file limit is 64,
// with 100 connections.
func TestRunOutOfDescriptors(t *testing.T) {
	if url := os.Getenv("MB_TEST_NOFILE_URL"); url != "" {
		res, err := Run(t.Context(), Options{URL: url, Connections: 100, Requests: 200, Timeout: 5 * time.Second}, nil)
		if err != nil {
			t.Fatal(err)
		}
		_ = json.NewEncoder(os.Stdout).Encode(res)
		return
	}
	t.Parallel()
	prlimit, err := exec.LookPath("prlimit")
	if err != nil {
		t.Skip("prlimit (util-linux) not installed")
	}
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer srv.Close()
	cmd := exec.CommandContext(t.Context(), prlimit, "--nofile=64:64", os.Args[0], "-test.run=^TestRunOutOfDescriptors$")
	cmd.Env = append(os.Environ(), "MB_TEST_NOFILE_URL="+srv.URL)
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("child: %v\n%s\n%s", err, out, ee.Stderr)
		}
		t.Fatalf("child: %v", err)
	}
	i := strings.IndexByte(string(out), '{')
	if i < 0 {
		t.Fatalf("child printed no result:\n%s", out)
	}
	var res Result
	if err := json.NewDecoder(strings.NewReader(string(out[i:]))).Decode(&res); err != nil {
		t.Fatalf("child's result: %v\n%s", err, out)
	}
	t.Logf("child: %d requests, error kinds %v, unopened %v", res.Requests, res.ErrorKinds, res.Unopened)
	if res.ErrorKinds[KindNoFiles] == 0 || res.ErrorKinds[KindOther] != 0 || res.Unopened[KindNoFiles] == 0 {
		t.Errorf("error kinds %v, unopened %v, want %q in both and no %q", res.ErrorKinds, res.Unopened, KindNoFiles, KindOther)
	}
	if !res.Distorted || !strings.Contains(strings.Join(res.Warnings, "; "), "ran out of file descriptors") {
		t.Errorf("distorted %v, warnings %q: want the generator's own limit named", res.Distorted, res.Warnings)
	}
}
