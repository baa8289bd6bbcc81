package kube

import (
	"bytes"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/meshbench/meshbench/internal/load"
	"github.com/meshbench/meshbench/internal/metrics"
	"github.com/meshbench/meshbench/internal/topology"
)

// TestJobManifestBody checks that a generator's body travels as a file
// from a ConfigMap of the Job's name, every byte of it, and that a load
// without a body has neither.
func TestJobManifestBody(t *testing.T) {
	t.Parallel()
	o := load.Options{URL: "http://e:8080/", Connections: 1, Requests: 5, Method: "POST", Body: []byte{0, 0xff, 'x', '\n'}}
	js := jobSpec{Namespace: "ns-1", Name: "g", Component: componentLoad, Load: o, Deadline: time.Minute}
	cm := bodyConfigMap(js)
	if cm == nil || cm.Name != js.Name || cm.Namespace != js.Namespace || !bytes.Equal(cm.BinaryData[loadBodyKey], o.Body) {
		t.Fatalf("body ConfigMap = %+v, want %s/%s holding the body", cm, js.Namespace, js.Name)
	}
	pod := jobManifest(js, "img", corev1.PullIfNotPresent).Spec.Template.Spec
	c := pod.Containers[0]
	if want := load.Args(o, loadBodyDir+"/"+loadBodyKey); strings.Join(c.Args, " ") != strings.Join(want, " ") {
		t.Errorf("args = %q, want %q", c.Args, want)
	}
	if len(pod.Volumes) != 1 || pod.Volumes[0].ConfigMap == nil || pod.Volumes[0].ConfigMap.Name != cm.Name ||
		len(c.VolumeMounts) != 1 || c.VolumeMounts[0].MountPath != loadBodyDir || c.VolumeMounts[0].Name != pod.Volumes[0].Name {
		t.Errorf("volumes %+v, mounts %+v: want the body ConfigMap at %s", pod.Volumes, c.VolumeMounts, loadBodyDir)
	}
	js.Load.Body = nil
	if cm := bodyConfigMap(js); cm != nil {
		t.Errorf("a load without a body made ConfigMap %s", cm.Name)
	}
	if pod := jobManifest(js, "img", corev1.PullIfNotPresent).Spec.Template.Spec; len(pod.Volumes) != 0 || slices.Contains(pod.Containers[0].Args, "--body-file") {
		t.Errorf("a load without a body mounts %+v, args %q", pod.Volumes, pod.Containers[0].Args)
	}
}

func testResult(t *testing.T, codes map[int]int64, errs int64) *load.Result {
	t.Helper()
	r := &load.Result{Options: load.Options{URL: "http://e/"}, StatusCodes: codes, Errors: errs,
		Latency: metrics.NewHistogram(), SendLag: metrics.NewHistogram(), ByClass: map[string]*metrics.Histogram{}}
	for _, n := range codes {
		r.Requests += n
		r.Latency.RecordN(time.Millisecond, n)
	}
	r.Requests += errs
	return r
}

func TestParseResult(t *testing.T) {
	t.Parallel()
	want := testResult(t, map[int]int64{200: 7}, 1)
	want.Latency.Record(3 * time.Millisecond)
	var report bytes.Buffer
	if err := load.WriteJSON(&report, want); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		log     string
		wantErr string
	}{
		{name: "the JSON alone", log: report.String()},
		{name: "after stderr lines and a stray brace", log: "time=x level=WARN msg=slow\n{not json\n" + report.String()},
		{name: "followed by an error line", log: report.String() + "meshbench: something\n"},
		{name: "empty", log: "", wantErr: "log is empty"},
		{name: "no JSON", log: "meshbench: dial tcp: connection refused\n", wantErr: "no JSON result"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := parseResult([]byte(tc.log))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Requests != want.Requests || !got.Latency.Equal(want.Latency) {
				t.Errorf("parsed %d requests, histogram equal %v; want %d and equal", got.Requests, got.Latency.Equal(want.Latency), want.Requests)
			}
		})
	}
}

func TestContainerDone(t *testing.T) {
	t.Parallel()
	status := func(phase corev1.PodPhase, st corev1.ContainerState) *corev1.Pod {
		return &corev1.Pod{Status: corev1.PodStatus{Phase: phase, ContainerStatuses: []corev1.ContainerStatus{
			{Name: "istio-proxy", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}},
			{Name: jobContainer, State: st},
		}}}
	}
	tests := []struct {
		name     string
		pod      *corev1.Pod
		done     bool
		contains string
	}{
		{name: "generator ended, sidecar still running", pod: status(corev1.PodRunning, corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed"}}),
			done: true, contains: "exit code 0"},
		{name: "running", pod: status(corev1.PodRunning, corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}), contains: "pod running"},
		{name: "bad image", pod: status(corev1.PodPending, corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff", Message: "not found"}}),
			contains: "cannot start: ImagePullBackOff"},
		{name: "pending without statuses", pod: &corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodPending}}, contains: "pod pending"},
		{name: "succeeded without statuses", pod: &corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodSucceeded}}, done: true, contains: "pod succeeded"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			done, why := containerDone(tc.pod, jobContainer)
			if done != tc.done || !strings.Contains(why, tc.contains) {
				t.Errorf("containerDone = %v, %q; want %v, containing %q", done, why, tc.done, tc.contains)
			}
		})
	}
}

func TestLoadDeadline(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		o    load.Options
		want time.Duration
	}{
		{name: "duration and warm-up", o: load.Options{Duration: time.Minute, Warmup: 10 * time.Second}, want: 70*time.Second + jobStartAllowance},
		{name: "open loop by count", o: load.Options{Requests: 9000, Rate: 450}, want: 20*time.Second + jobStartAllowance},
		{name: "closed loop by count", o: load.Options{Requests: 300000}, want: 10*time.Minute + jobStartAllowance},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := loadDeadline(tc.o); got != tc.want {
				t.Errorf("loadDeadline = %s, want %s", got, tc.want)
			}
		})
	}
}

// TestJobManifestResources checks that a study's generator resources reach
// the generator container, as the 50-tenant study ran each vegeta.
func TestJobManifestResources(t *testing.T) {
	t.Parallel()
	res, err := requirements(topology.Resources{CPURequest: "500m", CPULimit: "500m", MemoryRequest: "300Mi", MemoryLimit: "300Mi"})
	if err != nil {
		t.Fatal(err)
	}
	job := jobManifest(jobSpec{Namespace: "ns-1", Name: "g", Resources: res, Deadline: time.Minute}, "img", corev1.PullIfNotPresent)
	c := job.Spec.Template.Spec.Containers[0]
	if c.Resources.Requests.Cpu().MilliValue() != 500 || c.Resources.Limits.Memory().Value() != 300<<20 {
		t.Errorf("generator resources = %+v, want 500m / 300Mi", c.Resources)
	}
}
