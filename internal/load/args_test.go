package load

import (
	"net/http"
	"slices"
	"testing"
	"time"
)

func TestArgs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		o    Options
		want []string
	}{
		{name: "open loop with warm-up", o: Options{URL: "http://e:8080/", Rate: 450.5, Connections: 100, Duration: 10 * time.Minute, Warmup: 30 * time.Second, HTTP2: true, Timeout: time.Second},
			want: []string{"load", "--quiet", "--output", "json", "--connections", "100", "--timeout", "1s", "--rate", "450.5", "--duration", "10m0s", "--warmup", "30s", "--http2", "http://e:8080/"}},
		{name: "no timeout is written, not left to the default", o: Options{URL: "http://x/", Connections: 32, Requests: 300000, NoKeepAlive: true},
			want: []string{"load", "--quiet", "--output", "json", "--connections", "32", "--timeout", "0s", "--requests", "300000", "--no-keepalive", "http://x/"}},
		{name: "requests a connection", o: Options{URL: "http://x/", Connections: 4, Rate: 100, Duration: time.Second, ConnRequests: 10},
			want: []string{"load", "--quiet", "--output", "json", "--connections", "4", "--timeout", "0s", "--rate", "100", "--duration", "1s", "--conn-requests", "10", "http://x/"}},
		{name: "headers in name order, body as a file", o: Options{URL: "https://x/", Connections: 1, Requests: 5, Method: "POST", Insecure: true, GRPC: true,
			Header: http.Header{"X-B": {"2"}, "X-A": {"1", "3"}}, Body: []byte{0}},
			want: []string{"load", "--quiet", "--output", "json", "--connections", "1", "--timeout", "0s", "--requests", "5", "--grpc", "--insecure", "--method", "POST",
				"--header", "X-A: 1", "--header", "X-A: 3", "--header", "X-B: 2", "--body-file", "/b", "https://x/"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := Args(tt.o, "/b"); !slices.Equal(got, tt.want) {
				t.Errorf("Args =\n%q\nwant\n%q", got, tt.want)
			}
		})
	}
}
