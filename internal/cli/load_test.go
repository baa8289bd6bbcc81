package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func runCLI(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err := Run(context.Background(), Streams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}, args)
	return out.String(), errOut.String(), err
}

func TestLoadCommandJSON(t *testing.T) {
	t.Parallel()
	var got struct {
		body, header, method string
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got.body, got.header, got.method = string(b), r.Header.Get("X-Test"), r.Method
		fmt.Fprint(w, "ok")
	}))
	t.Cleanup(srv.Close)
	save := filepath.Join(t.TempDir(), "a.json")
	out, _, err := runCLI(t, "load", "-q", "-c", "1", "-n", "20", "-m", "put", "-H", "X-Test: yes", "--body", "hi",
		"--output", "json", "--save", save, srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Requests    int64              `json:"requests"`
		StatusCodes map[string]int64   `json:"status_codes"`
		LatencyMS   map[string]float64 `json:"latency_ms"`
		Histogram   string             `json:"histogram"`
		Result      json.RawMessage    `json:"result"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	if doc.Requests != 20 || doc.StatusCodes["200"] != 20 || doc.LatencyMS["p99"] <= 0 || doc.Histogram == "" || len(doc.Result) == 0 {
		t.Errorf("JSON output %s", out)
	}
	if got.body != "hi" || got.header != "yes" || got.method != "PUT" {
		t.Errorf("server got method %q header %q body %q", got.method, got.header, got.body)
	}
	saved, err := os.ReadFile(save)
	if err != nil || !bytes.Equal(saved, []byte(out)) {
		t.Errorf("--save wrote something else than --output json (%v)", err)
	}

	// Merging a result with itself doubles every count.
	merged, _, err := runCLI(t, "load", "merge", "-o", "json", save, save)
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Requests    int64            `json:"requests"`
		StatusCodes map[string]int64 `json:"status_codes"`
	}
	if err := json.Unmarshal([]byte(merged), &m); err != nil || m.Requests != 40 || m.StatusCodes["200"] != 40 {
		t.Errorf("merge: %v %s", err, merged)
	}
	text, _, err := runCLI(t, "load", "merge", save)
	if err != nil || !strings.Contains(text, "Latencies") {
		t.Errorf("merge text: %v\n%s", err, text)
	}
}

func TestLoadCommandErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args []string
		want string
	}{
		{name: "zero rate", args: []string{"load", "--rate", "0", "http://127.0.0.1:1/"}, want: "--rate must be positive"},
		{name: "negative rate", args: []string{"load", "--rate", "-5", "http://127.0.0.1:1/"}, want: "--rate must be positive"},
		{name: "no connections", args: []string{"load", "-c", "0", "http://127.0.0.1:1/"}, want: "--connections must be at least 1"},
		{name: "negative duration", args: []string{"load", "-d", "-1s", "http://127.0.0.1:1/"}, want: "--duration must not be negative"},
		{name: "bad output", args: []string{"load", "-o", "yaml", "http://127.0.0.1:1/"}, want: `"yaml" for "-o, --output" flag: want text, json`},
		{name: "bad header", args: []string{"load", "-H", "nocolon", "http://127.0.0.1:1/"}, want: `--header "nocolon"`},
		{name: "two bodies", args: []string{"load", "--body", "a", "--body-file", "f", "http://127.0.0.1:1/"}, want: "--body and --body-file"},
		{name: "URL without scheme", args: []string{"load", "localhost:8080/"}, want: "URL must start with http:// or https://"},
		{name: "unparsable URL", args: []string{"load", "127.0.0.1:1"}, want: "URL does not parse"},
		{name: "no URL", args: []string{"load"}, want: "accepts 1 arg"},
		{name: "merge of a missing file", args: []string{"load", "merge", "/nonexistent/x.json"}, want: "no such file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, _, err := runCLI(t, tt.args...)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want one with %q", err, tt.want)
			}
		})
	}
}
