package kube

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/meshbench/meshbench/internal/load"
	"github.com/meshbench/meshbench/internal/mesh"
	"github.com/meshbench/meshbench/internal/platform"
)

// TestIntegrationPodSecurityAdmits offers every pod meshbench makes (app,
// load and probe Jobs, a probe with its control, ambient's plaintext probe
// left out of the mesh and kept to a node, the plain gateway) to the API server's PodSecurity
// admission in a namespace that enforces "restricted", and in one that
// enforces "baseline", by server-side dry run; a bare pod is the control,
// which "restricted" must reject.
func TestIntegrationPodSecurityAdmits(t *testing.T) {
	c := needCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var specs []corev1.PodTemplateSpec
	objs, err := workloadManifests(platform.Workload{Graph: testGraph(t, "tiered"), Namespaces: 1}, manifestParams{Image: "meshbench.test/meshbench:it"})
	if err != nil {
		t.Fatal(err)
	}
	gw, err := plainIngress([]string{"ns-1"}, "tier-1-app-a", 8080, defaultClusterDomain, placement{}, defaultGatewayImage, mustProfile(t, mesh.ProfileBaseline))
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range append(objs, gw...) {
		if o.GetKind() != "Deployment" {
			continue
		}
		var d appsv1.Deployment
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &d); err != nil {
			t.Fatal(err)
		}
		specs = append(specs, d.Spec.Template)
	}
	job := jobManifest(jobSpec{Namespace: "ns-1", Name: "load", Component: componentLoad, ServiceAccount: "default", Load: load.Options{URL: "http://tier-1-app-a.ns-1:8080/", Requests: 1}, Deadline: time.Minute},
		"meshbench.test/meshbench:it", corev1.PullIfNotPresent)
	specs = append(specs, job.Spec.Template)
	// The plaintext probe of a sidecar mesh: its generator as the proxy's
	// user, beside a control container.
	control := load.Options{URL: "http://tier-1-app-a.ns-1:8080/", Requests: 1}
	probeJob := jobManifest(jobSpec{Namespace: "ns-1", Name: "probe", Component: componentProbe, ServiceAccount: "default", Load: control,
		Control: &control, UID: proxyUIDs[mesh.Istio], Deadline: time.Minute}, "meshbench.test/meshbench:it", corev1.PullIfNotPresent)
	specs = append(specs, probeJob.Spec.Template)
	// Ambient's plaintext probe: the control's neighbour, labelled out of
	// ambient and kept to the control's node.
	neighbour := jobManifest(jobSpec{Namespace: "ns-1", Name: "neighbour", Component: componentProbe, ServiceAccount: "default", Load: control,
		Labels: map[string]string{labelDataplane: dataplaneNone}, Node: "mb-load-1", Deadline: time.Minute}, "meshbench.test/meshbench:it", corev1.PullIfNotPresent)
	specs = append(specs, neighbour.Spec.Template)

	for _, level := range []string{pssRestrict, "baseline"} {
		ns := "mb-pss-" + level
		_, err := c.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: map[string]string{labelPSS: level}}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Client.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{}) })
		for i, tmpl := range specs {
			spec := tmpl.Spec
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("pod-%d", i), Namespace: ns, Labels: tmpl.Labels}, Spec: spec}
			pod.Spec.ServiceAccountName = ""
			if _, err := c.Client.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
				t.Errorf("%s: pod of %s (%s): %v", level, spec.Containers[0].Name, spec.Containers[0].Image, err)
			}
		}
	}
	bare := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "bare", Namespace: "mb-pss-restricted"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "meshbench.test/meshbench:it"}}}}
	_, err = c.Client.CoreV1().Pods(bare.Namespace).Create(ctx, bare, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	if err == nil || !strings.Contains(err.Error(), "violates PodSecurity") {
		t.Errorf("a bare pod under restricted: %v, want PodSecurity to reject it", err)
	}
}
