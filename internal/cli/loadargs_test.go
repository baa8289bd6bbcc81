package cli

import (
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/meshbench/meshbench/internal/load"
)

// TestLoadArgsRoundTrip checks that what load.Args writes, the one
// command line both platforms run, reads back through `meshbench load`'s
// own flags as the options it was written from: every option set at once
// but the upload's filler, which replaces the body (a new option fails the
// test until it travels), no timeout, and a binary body.
func TestLoadArgsRoundTrip(t *testing.T) {
	t.Parallel()
	every := load.Options{
		URL: "https://e:8443/p?q=1", Method: "POST", Header: http.Header{"X-A": {"1", "2"}, "X-B": {"b c"}},
		Body: []byte{0, 0xff, '\n', '"', ' '}, Timeout: 1500 * time.Millisecond, Rate: 450.25, Arrivals: load.ArrivalsPoisson, Seed: 1 << 63, Connections: 7,
		Duration: 90 * time.Second, Requests: 1234, Warmup: 5 * time.Second, WarmupMax: 20 * time.Second, NoKeepAlive: true, ConnRequests: 3, HTTP2: true, GRPC: true, Insecure: true,
	}
	// An upload's filler replaces the body, so it travels in a case of
	// its own.
	upload := load.Options{URL: "http://x/", Method: "POST", Connections: 1, Duration: time.Second, BodySize: 100_000_000}
	v, u := reflect.ValueOf(every), reflect.ValueOf(upload)
	for i := range v.NumField() {
		if v.Field(i).IsZero() && u.Field(i).IsZero() {
			t.Fatalf("the cases meant to set every option leave %s unset", v.Type().Field(i).Name)
		}
	}
	tests := []struct {
		name string
		o    load.Options
	}{
		{"every option", every},
		{"upload", upload},
		{"no timeout, closed loop, no body", load.Options{URL: "http://x/", Method: "GET", Connections: 1, Requests: 5}},
		{"binary body, duration only", load.Options{URL: "http://x/", Method: "PUT", Connections: 2, Duration: time.Second, Body: []byte{0x80, 0, 0xc3}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			bodyFile := filepath.Join(t.TempDir(), "body")
			if err := os.WriteFile(bodyFile, tt.o.Body, 0o600); err != nil {
				t.Fatal(err)
			}
			args := load.Args(tt.o, bodyFile)
			if args[0] != "load" {
				t.Fatalf("args start with %q, want the load subcommand", args[0])
			}
			var (
				g   globals
				got load.Options
				f   loadFlags
			)
			cmd := &cobra.Command{Use: "load"}
			g.bind(cmd)
			bindLoadFlags(cmd, &got, &f)
			if err := cmd.ParseFlags(args[1:]); err != nil {
				t.Fatalf("parse %q: %v", args, err)
			}
			if rest := cmd.Flags().Args(); len(rest) != 1 {
				t.Fatalf("positional arguments %q, want the URL alone", rest)
			} else {
				got.URL = rest[0]
			}
			if err := f.apply(cmd, &got); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.o) {
				t.Errorf("read back\n%+v\nwant\n%+v", got, tt.o)
			}
			if !g.quiet || f.output != "json" {
				t.Errorf("quiet %v, output %q: want a quiet generator writing JSON", g.quiet, f.output)
			}
		})
	}
}
