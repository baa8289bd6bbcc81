package app

import (
	"encoding/json"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// The answer is a call tree:
//
//	{"service":"a","version":"v1","status":200,"duration_ms":1.234,
//	 "calls":[{...same shape...}],"payload":"xxxx"}
//
// It is appended by hand into pooled buffers, since it is the hot path of
// every request; only the rare error nodes go through encoding/json.

// renderHead renders the constant start of every answer of one service.
func renderHead(service, version, namespace, pod string) []byte {
	b := []byte(`{"service":`)
	b = appendJSONString(b, service)
	b = append(b, `,"version":`...)
	b = appendJSONString(b, version)
	if namespace != "" {
		b = append(b, `,"namespace":`...)
		b = appendJSONString(b, namespace)
	}
	if pod != "" {
		b = append(b, `,"pod":`...)
		b = appendJSONString(b, pod)
	}
	return b
}

// render appends the answer to b, padding it with a payload field up to the
// service's response size.
func (h *handler) render(b []byte, status int, took time.Duration, calls []result) []byte {
	b = append(b, h.head...)
	b = append(b, `,"status":`...)
	b = strconv.AppendInt(b, int64(status), 10)
	b = append(b, `,"duration_ms":`...)
	b = strconv.AppendFloat(b, float64(took.Microseconds())/1000, 'f', 3, 64)
	b = append(b, `,"calls":[`...)
	for i, c := range calls {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, c.node...)
	}
	b = append(b, ']')
	const payloadField = `,"payload":""}`
	if pad := h.b.ResponseSize - len(b) - len(payloadField); pad > 0 {
		b = append(b, payloadField[:len(payloadField)-2]...)
		b = append(b, padding(pad)...)
		b = append(b, `"}`...)
		return b
	}
	return append(b, '}')
}

// errorResult is the node for a call that produced no call tree.
func (h *handler) errorResult(service string, status int, msg string) result {
	node, _ := json.Marshal(struct {
		Service string `json:"service"`
		Status  int    `json:"status"`
		Error   string `json:"error"`
	}{service, status, msg}) // cannot fail: strings and an int
	return result{node: node, status: status}
}

// isTree says whether a downstream answer can be embedded in the tree as it
// is. Successful JSON answers are trusted without a scan.
func isTree(body []byte, trusted bool) bool {
	if len(body) == 0 || body[0] != '{' {
		return false
	}
	return trusted || json.Valid(body)
}

func appendJSONString(b []byte, s string) []byte {
	q, _ := json.Marshal(s) // cannot fail for a string
	return append(b, q...)
}

// padBytes is the shared filler, grown to the largest answer asked for:
// a bulk-transfer service answers megabytes every request, and making
// them anew each time would cost the app more than the transfer.
var padBytes atomic.Pointer[[]byte]

// padding returns n bytes of filler, from one shared buffer grown as needed.
func padding(n int) []byte {
	if p := padBytes.Load(); p != nil && len(*p) >= n {
		return (*p)[:n]
	}
	// Two first callers may both grow it; either buffer serves.
	b := []byte(strings.Repeat("x", max(n, 64<<10)))
	padBytes.Store(&b)
	return b[:n]
}

// bufPool holds answer buffers; most answers are a few KB.
var bufPool = sync.Pool{New: func() any { b := make([]byte, 0, 8<<10); return &b }}

func getBuf() *[]byte { return bufPool.Get().(*[]byte) }

// putBuf returns a buffer unless it grew large, so that one huge answer
// does not pin its memory.
func putBuf(b *[]byte) {
	if cap(*b) <= 256<<10 {
		bufPool.Put(b)
	}
}

func releaseResults(rs []result) {
	for _, r := range rs {
		if r.buf != nil {
			putBuf(r.buf)
		}
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
