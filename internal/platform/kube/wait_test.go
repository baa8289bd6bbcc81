package kube

import (
	"context"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

func TestRolloutState(t *testing.T) {
	t.Parallel()
	dep := func(gen, observed int64, replicas, updated, available int32, conds ...appsv1.DeploymentCondition) *appsv1.Deployment {
		return &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Generation: gen},
			Spec:       appsv1.DeploymentSpec{Replicas: ptr(replicas)},
			Status: appsv1.DeploymentStatus{ObservedGeneration: observed, Replicas: replicas, UpdatedReplicas: updated,
				AvailableReplicas: available, Conditions: conds},
		}
	}
	tests := []struct {
		name    string
		d       *appsv1.Deployment
		done    bool
		failure string
	}{
		{name: "rolled out", d: dep(2, 2, 3, 3, 3), done: true},
		{name: "not observed yet", d: dep(3, 2, 3, 3, 3)},
		{name: "old pods still up", d: dep(2, 2, 3, 1, 3)},
		{name: "webhook refuses pods", d: dep(2, 2, 3, 0, 0, appsv1.DeploymentCondition{
			Type: appsv1.DeploymentReplicaFailure, Status: corev1.ConditionTrue, Reason: "FailedCreate",
			Message: `Internal error occurred: failed calling webhook "namespace.sidecar-injector.istio.io"`}),
			failure: "FailedCreate: Internal error occurred: failed calling webhook"},
		{name: "deadline exceeded", d: dep(2, 2, 3, 1, 1, appsv1.DeploymentCondition{
			Type: appsv1.DeploymentProgressing, Status: corev1.ConditionFalse, Reason: "ProgressDeadlineExceeded", Message: "took too long"}),
			failure: "took too long"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			done, failure := rolloutState(tc.d)
			if done != tc.done || !strings.Contains(failure, tc.failure) || (tc.failure == "" && failure != "") {
				t.Errorf("rolloutState = %v, %q; want %v, %q", done, failure, tc.done, tc.failure)
			}
		})
	}
}

// TestWaitRolloutsRetriesFailedCreate: a FailedCreate that clears within
// the grace (the injector's webhook coming up) is waited out; one that
// persists fails the wait, well before its deadline.
func TestWaitRolloutsRetriesFailedCreate(t *testing.T) {
	old := replicaFailureGrace
	replicaFailureGrace = 1500 * time.Millisecond
	defer func() { replicaFailureGrace = old }()
	failed := appsv1.DeploymentCondition{Type: appsv1.DeploymentReplicaFailure, Status: corev1.ConditionTrue, Reason: "FailedCreate", Message: "webhook not serving"}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns-1", Name: "app", Generation: 1},
		Spec:       appsv1.DeploymentSpec{Replicas: ptr(int32(1))},
		Status:     appsv1.DeploymentStatus{ObservedGeneration: 1, Conditions: []appsv1.DeploymentCondition{failed}},
	}
	for _, clears := range []bool{true, false} {
		cs := fake.NewClientset(d.DeepCopy())
		p := &kubePlatform{opts: Options{Timeout: time.Minute}, c: &clients{kube: cs}}
		if clears {
			go func() {
				time.Sleep(500 * time.Millisecond)
				ok := d.DeepCopy()
				ok.Status = appsv1.DeploymentStatus{ObservedGeneration: 1, Replicas: 1, UpdatedReplicas: 1, ReadyReplicas: 1, AvailableReplicas: 1}
				_, _ = cs.AppsV1().Deployments("ns-1").UpdateStatus(context.Background(), ok, metav1.UpdateOptions{})
			}()
		}
		start := time.Now()
		err := p.waitRollouts(context.Background(), []string{"ns-1"}, "")
		switch {
		case clears && err != nil:
			t.Errorf("a FailedCreate that cleared: %v", err)
		case !clears && (err == nil || !strings.Contains(err.Error(), "webhook not serving")):
			t.Errorf("a FailedCreate that persists: %v, want the failure", err)
		case !clears && time.Since(start) > 10*time.Second:
			t.Errorf("a persisting FailedCreate failed after %s, want soon after the grace", time.Since(start))
		}
	}
}
