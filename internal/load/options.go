package load

import (
	"bytes"
	"net/http"
	"time"

	"github.com/meshbench/meshbench/internal/http1wire"
)

// Options say what load to generate. A Result embeds the normalized Options
// that produced it, so that a result says how it was made.
type Options struct {
	URL    string      `json:"url"`
	Method string      `json:"method"`
	Header http.Header `json:"header,omitempty"`
	Body   []byte      `json:"body,omitempty"`
	// BodySize, in place of Body, sends that many bytes of filler as each
	// request's body (an upload), made once in the generator, so that a
	// large upload neither travels as a file nor fills a result; at most
	// MaxBodySize.
	BodySize int64         `json:"body_size,omitempty"`
	Timeout  time.Duration `json:"timeout"`

	// Rate is the open-loop arrival rate in requests per second; zero means
	// closed loop, each connection sending as soon as its last response came.
	Rate float64 `json:"rate,omitempty"`
	// Arrivals is an open loop's arrival process: ArrivalsUniform (or
	// "", evenly spaced sends) or ArrivalsPoisson (exponential gaps of
	// the same mean, drawn from Seed). Latency is measured from each
	// hit's intended time under both.
	Arrivals string `json:"arrivals,omitempty"`
	// Seed seeds Poisson arrivals: the same seed and rate give the same
	// intended send times. Zero draws a seed, which the Result records.
	Seed        uint64 `json:"seed,omitempty"`
	Connections int    `json:"connections"`

	// Duration or Requests bounds the measured phase; Warmup runs first and
	// is excluded from the results.
	Duration time.Duration `json:"duration,omitempty"`
	Requests int64         `json:"requests,omitempty"`
	Warmup   time.Duration `json:"warmup,omitempty"`
	// WarmupMax, in a closed loop, lets the warm-up go on past Warmup
	// while the throughput still rises, up to WarmupMax: what a capacity
	// measured on a cold proxy needs (see schedule.settle). Zero: the
	// warm-up is Warmup.
	WarmupMax time.Duration `json:"warmup_max,omitempty"`

	NoKeepAlive bool `json:"no_keepalive,omitempty"`
	// ConnRequests closes each HTTP/1.1 connection after it carried this
	// many requests, the next request opening a new one: with Rate, N new
	// connections a second carrying ConnRequests requests each are
	// Rate/ConnRequests. Zero keeps a connection as long as the server
	// does; NoKeepAlive is 1.
	ConnRequests int  `json:"conn_requests,omitempty"`
	HTTP2        bool `json:"http2,omitempty"`
	// GRPC makes unary gRPC calls to the test service's method
	// (grpcapp.Method) over HTTP/2, h2c for http://, with Body as the
	// request's bytes; URL gives only the address.
	GRPC     bool `json:"grpc,omitempty"`
	Insecure bool `json:"insecure,omitempty"`
}

// MaxBodySize bounds BodySize: the generator holds one request's bytes,
// and the test service refuses a larger body.
const MaxBodySize = http1wire.MaxRequestBody

// requestBody is the body every request sends: Body, or BodySize bytes of
// filler.
func (o *Options) requestBody() []byte {
	if o.BodySize > 0 {
		return bytes.Repeat([]byte{'x'}, int(o.BodySize))
	}
	return o.Body
}
