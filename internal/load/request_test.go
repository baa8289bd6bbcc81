package load

import (
	"net/http"
	"testing"
)

func TestHTTP1Request(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		opts Options
		want string
	}{
		{
			name: "plain GET",
			opts: Options{URL: "http://127.0.0.1:8080/a?b=c", Method: "GET"},
			want: "GET /a?b=c HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nUser-Agent: meshbench\r\n\r\n",
		},
		{
			name: "POST with body and sorted headers, no keep-alive",
			opts: Options{
				URL: "http://svc/", Method: "POST", Body: []byte("{}"), NoKeepAlive: true,
				Header: http.Header{"X-B": {"2"}, "X-A": {"1"}, "Content-Length": {"999"}},
			},
			want: "POST / HTTP/1.1\r\nHost: svc\r\nConnection: close\r\nContent-Length: 2\r\nUser-Agent: meshbench\r\nX-A: 1\r\nX-B: 2\r\n\r\n{}",
		},
		{
			name: "Host and User-Agent overrides",
			opts: Options{URL: "https://10.0.0.1/", Method: "GET", Header: http.Header{"Host": {"example.test"}, "User-Agent": {"ua"}}},
			want: "GET / HTTP/1.1\r\nHost: example.test\r\nUser-Agent: ua\r\n\r\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tg, err := parseTarget(tt.opts.URL)
			if err != nil {
				t.Fatal(err)
			}
			if got := string(http1Request(&tt.opts, tg)); got != tt.want {
				t.Errorf("got\n%q\nwant\n%q", got, tt.want)
			}
		})
	}
}
