package kube

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
