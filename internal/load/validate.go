package load

import (
	"math"
	"math/rand/v2"
	"strconv"
	"strings"

	"golang.org/x/net/http/httpguts"
)

// normalize checks the options and fills in defaults, so that a Result
// records exactly what ran.
func (o *Options) normalize() error {
	if _, err := parseTarget(o.URL); err != nil {
		return err
	}
	if o.Method == "" {
		o.Method = "GET"
	}
	o.Method = strings.ToUpper(o.Method)
	if !httpguts.ValidHeaderFieldName(o.Method) {
		return &OptionError{Field: "method", Problem: "is not a valid HTTP method"}
	}
	for k, vs := range o.Header {
		if !httpguts.ValidHeaderFieldName(k) {
			return &OptionError{Field: "header", Problem: "has an invalid name " + strconv.Quote(k)}
		}
		for _, v := range vs {
			if !httpguts.ValidHeaderFieldValue(v) {
				return &OptionError{Field: "header", Problem: "has an invalid value for " + k}
			}
		}
	}
	switch {
	case math.IsNaN(o.Rate) || math.IsInf(o.Rate, 0) || o.Rate < 0:
		return &OptionError{Field: "rate", Problem: "must be positive, or zero for a closed loop"}
	case o.Connections < 1:
		return &OptionError{Field: "connections", Problem: "must be at least 1"}
	case o.Duration < 0:
		return &OptionError{Field: "duration", Problem: "must not be negative"}
	case o.Requests < 0:
		return &OptionError{Field: "requests", Problem: "must not be negative"}
	case o.Duration == 0 && o.Requests == 0:
		return &OptionError{Field: "duration", Problem: "or requests must bound the run"}
	case o.Warmup < 0:
		return &OptionError{Field: "warmup", Problem: "must not be negative"}
	case o.WarmupMax < 0:
		return &OptionError{Field: "warmup-max", Problem: "must not be negative"}
	case o.Arrivals != "" && o.Arrivals != ArrivalsUniform && o.Arrivals != ArrivalsPoisson:
		return &OptionError{Field: "arrivals", Problem: "must be " + ArrivalsUniform + " or " + ArrivalsPoisson}
	case o.Arrivals != "" && o.Rate == 0:
		return &OptionError{Field: "arrivals", Problem: "applies to an open loop only (give a rate): a closed loop sends each request when the last response came, and has no arrival process"}
	case o.Seed != 0 && o.Arrivals != ArrivalsPoisson:
		return &OptionError{Field: "seed", Problem: "seeds poisson arrivals only; uniform ones are not drawn"}
	case o.WarmupMax > 0 && o.Rate > 0:
		return &OptionError{Field: "warmup-max", Problem: "applies to a closed loop only: an open loop's throughput is its rate, so it cannot show a warm-up's end"}
	case o.WarmupMax > 0 && (o.Warmup <= 0 || o.WarmupMax < o.Warmup):
		return &OptionError{Field: "warmup-max", Problem: "needs a warmup, and must be at least as long: the warm-up lasts from warmup to warmup-max"}
	case o.GRPC && o.NoKeepAlive:
		return &OptionError{Field: "no-keepalive", Problem: "cannot be used with grpc: a gRPC client keeps its connection"}
	case o.ConnRequests < 0:
		return &OptionError{Field: "conn-requests", Problem: "must not be negative (0 keeps connections open)"}
	case o.ConnRequests > 0 && (o.GRPC || o.HTTP2):
		return &OptionError{Field: "conn-requests", Problem: "applies to HTTP/1.1 only: an HTTP/2 or gRPC client keeps its connection"}
	case o.GRPC && o.HTTP2:
		return &OptionError{Field: "http2", Problem: "cannot be used with grpc, which is HTTP/2 already"}
	case o.BodySize < 0 || o.BodySize > MaxBodySize:
		return &OptionError{Field: "body-size", Problem: "must be from 0 to " + strconv.Itoa(MaxBodySize) + " bytes"}
	case o.BodySize > 0 && len(o.Body) > 0:
		return &OptionError{Field: "body-size", Problem: "cannot be used with a body: it is the body"}
	case o.Timeout < 0:
		return &OptionError{Field: "timeout", Problem: "must not be negative (0 means none)"}
	}
	if o.Arrivals == ArrivalsPoisson && o.Seed == 0 {
		// Drawn here, so that the result records the seed that ran.
		o.Seed = max(rand.Uint64(), 1)
	}
	return nil
}
