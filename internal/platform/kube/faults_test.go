package kube

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestRestartFaults(t *testing.T) {
	t.Parallel()
	app := func(name string, app, proxy int32) corev1.Pod {
		return corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns-1", Name: name, Labels: map[string]string{labelComponent: componentApp}},
			Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{
				{Name: appContainer, RestartCount: app}, {Name: "istio-proxy", RestartCount: proxy}}},
		}
	}
	before := restartCounts([]corev1.Pod{app("front-0", 0, 1), app("back-0", 2, 0)})
	after := []corev1.Pod{app("front-0", 0, 2), app("back-0", 3, 0), app("new-0", 5, 5)}
	got := strings.Join(restartFaults(after, before), "\n")
	want := "proxy restarted: ns-1/front-0/istio-proxy (restarts: 1 before the measurement, 2 after)\n" +
		"container restarted: ns-1/back-0/" + appContainer + " (restarts: 2 before the measurement, 3 after)"
	if got != want {
		t.Errorf("faults:\n%s\nwant:\n%s", got, want)
	}
	if f := restartFaults(after, restartCounts(after)); f != nil {
		t.Errorf("no restart, faults %v", f)
	}
}

// A Helm action without a context gets the time left before the
// teardown's deadline, not the platform's whole timeout.
func TestHelmTimeout(t *testing.T) {
	t.Parallel()
	if d, err := helmTimeout(context.Background(), 5*time.Minute); err != nil || d != 5*time.Minute {
		t.Errorf("no deadline: %v, %v", d, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if d, err := helmTimeout(ctx, 5*time.Minute); err != nil || d > 10*time.Second || d < 9*time.Second {
		t.Errorf("10s left: %v, %v", d, err)
	}
	done, stop := context.WithCancel(context.Background())
	stop()
	if _, err := helmTimeout(done, 5*time.Minute); err == nil {
		t.Error("a context already done gave a timeout")
	}
}
