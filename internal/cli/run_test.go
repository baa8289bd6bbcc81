package cli

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/meshbench/meshbench/internal/results/confined"
	"github.com/meshbench/meshbench/internal/study"
)

// TestLabName checks that every process ID makes a valid lab prefix: 1 to
// 8 lower-case letters or digits.
func TestLabName(t *testing.T) {
	t.Parallel()
	valid := regexp.MustCompile(`^[a-z0-9]{1,8}$`)
	tests := []struct {
		name string
		pid  int
		want string
	}{
		{"small", 1, "mbr1"},
		{"base 36", 46655, "mbrzzz"},
		{"linux pid_max", 4194304, "mbr2hwcg"},
	}
	for _, tt := range tests {
		got := labName(tt.pid)
		if got != tt.want || !valid.MatchString(got) {
			t.Errorf("%s: labName(%d) = %q, want %q", tt.name, tt.pid, got, tt.want)
		}
	}
}

// TestOpenPlatformKubernetes checks that a Kubernetes platform section is
// opened without a cluster (kube.New does not contact it) and that a
// missing section or kubeconfig gives an error naming the fix, not a panic.
func TestOpenPlatformKubernetes(t *testing.T) {
	t.Parallel()
	kubeconfig := filepath.Join(t.TempDir(), "config")
	const cfg = `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: bench, context: {cluster: c, user: u}}]
current-context: bench
`
	if err := os.WriteFile(kubeconfig, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		k       *study.Kubernetes
		wantErr string
	}{
		{name: "no section", k: nil, wantErr: "image is required"},
		{name: "missing kubeconfig", k: &study.Kubernetes{Image: "r/mb:v1", Kubeconfig: filepath.Join(t.TempDir(), "nope")}, wantErr: "--kubeconfig"},
		{name: "unknown context", k: &study.Kubernetes{Image: "r/mb:v1", Kubeconfig: kubeconfig, Context: "other"}, wantErr: "other"},
		{name: "opens", k: &study.Kubernetes{Image: "r/mb:v1", Kubeconfig: kubeconfig, Context: "bench"}},
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := study.Platform{Type: study.PlatformKubernetes, Kubernetes: tt.k}
			pl, err := openPlatform(context.Background(), p, log, confined.Dir{Root: t.TempDir(), Name: "logs/pods"})
			if tt.wantErr == "" {
				if err != nil || pl == nil {
					t.Fatalf("openPlatform = %v, %v", pl, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want it to hold %q", err, tt.wantErr)
			}
		})
	}
}
