package cluster

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/meshbench/meshbench/internal/testenv"
)

// The test binary doubles as the containers' program: with MB_LAB_HELPER
// set it serves, spins, allocates or runs a lab instead of the tests.
func TestMain(m *testing.M) {
	switch os.Getenv("MB_LAB_HELPER") {
	case "":
		os.Exit(m.Run())
	case "serve":
		helperServe()
	case "spin":
		for {
		}
	case "alloc":
		helperAlloc()
	case "up":
		helperUp()
	}
	os.Exit(3)
}

// helperServe answers every request with the pod's name.
func helperServe() {
	name := os.Getenv("POD_NAME")
	http.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, name) })
	_ = http.ListenAndServe(":"+os.Getenv("PORT"), nil)
}

// helperAlloc touches 8 MiB more every few milliseconds, up to 1 GiB.
func helperAlloc() {
	var keep [][]byte
	for i := 0; i < 128; i++ {
		b := make([]byte, 8<<20)
		for j := range b {
			b[j] = byte(j)
		}
		keep = append(keep, b)
		time.Sleep(5 * time.Millisecond)
	}
	fmt.Println(len(keep))
}

// helperUp brings a lab up with one serving pod per node, says "ready" and
// waits to be killed.
func helperUp() {
	ctx := context.Background()
	l, err := Up(ctx, Config{Name: os.Getenv("MB_PREFIX"), Prefix: os.Getenv("MB_PREFIX"), StateDir: os.Getenv("MB_STATE"),
		Nodes: []NodeConfig{{Name: "a", Role: "app"}, {Name: "b", Role: "load"}}})
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	if err := l.CreatePods(ctx, []PodSpec{servePod("ns-1", "p-a", "a", 8080), servePod("ns-1", "p-b", "b", 8080)}); err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	if err := l.WaitReady(ctx); err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	fmt.Println("ready")
	select {}
}

func helperBin(t testing.TB) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return exe
}

func servePod(ns, name, node string, port int) PodSpec {
	exe, _ := os.Executable()
	return PodSpec{Namespace: ns, Name: name, Node: node, Labels: map[string]string{"app": "web"},
		Containers: []ContainerSpec{{Name: "web", Command: []string{exe},
			Env:       []string{"MB_LAB_HELPER=serve", fmt.Sprintf("PORT=%d", port)},
			Readiness: &Probe{Port: port, Path: "/"}}}}
}

func testPrefix(t testing.TB) string {
	b := make([]byte, 2)
	_, _ = rand.Read(b)
	return "mbt" + hex.EncodeToString(b)
}

// newTestLab brings up a lab with a unique prefix, removed when the test
// ends whatever happens.
func newTestLab(t *testing.T, nodes ...NodeConfig) *Lab {
	t.Helper()
	testenv.Integration(t)
	testenv.NeedRoot(t)
	prefix := testPrefix(t)
	state := filepath.Join(t.TempDir(), "state")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	l, err := Up(ctx, Config{Name: prefix, Prefix: prefix, StateDir: state, Nodes: nodes})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		if err := l.Down(ctx); err != nil {
			t.Errorf("down: %v", err)
		}
		if left, _ := listNetns(prefix); len(left) > 0 {
			t.Errorf("namespaces left after down: %v", left)
		}
	})
	return l
}

// readLines returns a channel of a reader's lines.
func readLines(f *os.File) <-chan string {
	c := make(chan string, 16)
	go func() {
		s := bufio.NewScanner(f)
		for s.Scan() {
			c <- s.Text()
		}
		close(c)
	}()
	return c
}

func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }
