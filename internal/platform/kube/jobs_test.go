package kube

import (
	"bytes"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/meshbench/meshbench/internal/load"
	"github.com/meshbench/meshbench/internal/metrics"
)

func TestLoadArgs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		o    load.Options
		want string
	}{
		{name: "open loop with warm-up", o: load.Options{URL: "http://e:8080/", Rate: 450, Connections: 100, Duration: 10 * time.Minute, Warmup: 30 * time.Second, HTTP2: true},
			want: "load --quiet --output json --connections 100 --rate 450 --duration 10m0s --warmup 30s --http2 http://e:8080/"},
		{name: "closed loop by count, no keep-alive", o: load.Options{URL: "http://p:9080/productpage", Connections: 32, Requests: 300000, NoKeepAlive: true, Timeout: 10 * time.Second},
			want: "load --quiet --output json --connections 32 --requests 300000 --timeout 10s --no-keepalive http://p:9080/productpage"},
		{name: "method and header", o: load.Options{URL: "http://e/", Connections: 1, Requests: 5, Method: "DELETE", Header: http.Header{"X-A": {"b"}}},
			want: "load --quiet --output json --connections 1 --requests 5 --method DELETE --header X-A: b http://e/"},
		{name: "gRPC", o: load.Options{URL: "http://e/", Connections: 8, Requests: 5, GRPC: true},
			want: "load --quiet --output json --connections 8 --requests 5 --grpc http://e/"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := strings.Join(loadArgs(tc.o), " "); got != tc.want {
				t.Errorf("loadArgs =\n  %s\nwant\n  %s", got, tc.want)
			}
		})
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
			done, why := containerDone(tc.pod)
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
