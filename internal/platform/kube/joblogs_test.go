package kube

import (
	"context"
	"os"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/meshbench/meshbench/internal/results/confined"
	"github.com/meshbench/meshbench/internal/results/resultstest"
)

// TestJobLogRefusesLinkSwappedIn: a measurement's log directory in a
// results directory has a directory on its way swapped for a link, as
// someone sharing the results could mid-run: keeping the generator's log
// is refused, and nothing is written where the link points.
func TestJobLogRefusesLinkSwappedIn(t *testing.T) {
	t.Parallel()
	for _, swapped := range []string{"logs", "logs/cells", "logs/cells/c1"} {
		t.Run(swapped, func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			victimDir := resultstest.SwapForLink(t, root, "logs/cells/c1", swapped)
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns-1", Name: "load-x"}}
			p := &kubePlatform{c: &clients{kube: fake.NewClientset(pod.DeepCopy())}}
			js := jobSpec{Namespace: "ns-1", Name: "load", Component: componentLoad, LogDir: confined.Dir{Root: root, Name: "logs/cells/c1"}}
			_, err := p.readResult(context.Background(), js, pod, jobContainer, "completed")
			if err == nil || !strings.Contains(err.Error(), "keep its log") || !strings.Contains(err.Error(), "refused: a symbolic link") {
				t.Errorf("readResult: %v, want keeping its log refused at the link", err)
			}
			if entries, _ := os.ReadDir(victimDir); len(entries) != 0 {
				t.Errorf("the directory outside now holds %d entries", len(entries))
			}
		})
	}
}
