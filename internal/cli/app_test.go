package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestAppServeGraph(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, Streams{In: strings.NewReader(""), Out: pw, ErrOut: io.Discard},
			[]string{"app", "serve-graph", "--graph", "tiered", "--listen", "127.0.0.1:0", "--namespaces", "2"})
		pw.Close()
	}()
	// The first line is ns-1's entry: "ns-1\ttier-1-app-a\thttp://...".
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatalf("reading serve-graph output: %v", err)
	}
	go io.Copy(io.Discard, pr)
	fields := strings.Split(strings.TrimSpace(line), "\t")
	if len(fields) != 3 || fields[0] != "ns-1" || fields[1] != "tier-1-app-a" {
		t.Fatalf("first line %q", line)
	}
	resp, err := http.Get(fields[2])
	if err != nil {
		t.Fatal(err)
	}
	var tree struct {
		Status int               `json:"status"`
		Calls  []json.RawMessage `json:"calls"`
	}
	err = json.NewDecoder(resp.Body).Decode(&tree)
	resp.Body.Close()
	if err != nil || resp.StatusCode != 200 || tree.Status != 200 || len(tree.Calls) != 2 {
		t.Errorf("entry answered %d, tree %+v, err %v", resp.StatusCode, tree, err)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("serve-graph returned %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("serve-graph did not stop")
	}
}
