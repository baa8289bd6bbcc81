package app

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/meshbench/meshbench/internal/topology"
)

// node is the call tree as a client reads it.
type node struct {
	Service   string  `json:"service"`
	Version   string  `json:"version"`
	Namespace string  `json:"namespace"`
	Pod       string  `json:"pod"`
	Status    int     `json:"status"`
	Duration  float64 `json:"duration_ms"`
	Error     string  `json:"error"`
	Payload   string  `json:"payload"`
	Calls     []node  `json:"calls"`
}

// servers counts the servers a request reached: nodes that answered with a
// call tree of their own (error nodes carry no version).
func (n node) servers() int {
	c := 0
	if n.Version != "" {
		c = 1
	}
	for _, k := range n.Calls {
		c += k.servers()
	}
	return c
}

// startGraph runs a graph on loopback until the test ends.
func startGraph(t *testing.T, g *topology.Graph, o GraphOptions) *GraphServer {
	t.Helper()
	o.Graph = g
	if o.Listen == "" {
		o.Listen = "127.0.0.1:0"
	}
	gs, err := StartGraph(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(gs.Close)
	return gs
}

// get fetches url and decodes the call tree.
func get(t *testing.T, c *http.Client, url string) (int, node, []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var n node
	if err := json.Unmarshal(body, &n); err != nil {
		t.Fatalf("answer is not JSON: %v\n%s", err, body)
	}
	return resp.StatusCode, n, body
}

func mustGraph(t *testing.T, nameOrPath string) *topology.Graph {
	t.Helper()
	g, err := topology.Load(nameOrPath)
	if err != nil {
		t.Fatal(err)
	}
	return g
}
