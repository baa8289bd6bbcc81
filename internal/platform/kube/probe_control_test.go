package kube

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/meshbench/meshbench/internal/load"
	"github.com/meshbench/meshbench/internal/mesh"
	corev1 "k8s.io/api/core/v1"
)

// outcome is what the load generator really reports when it calls url:
// the probes are judged on such results, recorded here from local
// servers that behave as the mesh or the network would.
func outcome(t *testing.T, url string) *load.Result {
	t.Helper()
	r, err := load.Run(context.Background(), load.Options{URL: url, Method: http.MethodGet, Connections: 1, Requests: probeRequests,
		Timeout: 300 * time.Millisecond}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// listen serves TCP on loopback with handle, and returns its URL.
func listen(t *testing.T, handle func(net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go handle(c)
		}
	}()
	return "http://" + ln.Addr().String() + "/"
}

// closedPort is a loopback port nothing listens on: connecting to it is
// refused, as a NetworkPolicy that rejects rather than drops refuses it.
func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + ln.Addr().String() + "/"
	ln.Close()
	return url
}

// TestPlaintextRefusedSamePodControl judges the plaintext probe, run past
// a sidecar beside a meshed control in the same pod, on what the
// generator reports in each situation. It is the evidence that a
// NetworkPolicy without a mesh cannot pass plaintext-refused: the test
// apiserver's kwok pods carry no traffic and enforce no NetworkPolicy,
// so no integration test can show it.
func TestPlaintextRefusedSamePodControl(t *testing.T) {
	t.Parallel()
	answered := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
	t.Cleanup(answered.Close)
	// A proxy that wants mTLS reads the plaintext request and hangs up.
	refusing := listen(t, func(c net.Conn) {
		c.Read(make([]byte, 512))
		c.Close()
	})
	// A dropped SYN: the call waits out its timeout.
	silent := listen(t, func(c net.Conn) {
		time.Sleep(2 * time.Second)
		c.Close()
	})
	rejected := closedPort(t)
	tests := []struct {
		name           string
		probe, control string
		pass           bool
		detail         string
	}{
		{name: "mesh refuses plaintext, answers the same pod's meshed call", probe: refusing, control: answered.URL, pass: true},
		// Beside a same-pod control, a refusal at connect is not the
		// network's: the same network carried the control.
		{name: "refused at connect, the same pod's meshed call answered", probe: rejected, control: answered.URL, pass: true},
		{name: "no mesh, default-deny NetworkPolicy that drops", probe: silent, control: silent, detail: "not a timeout"},
		{name: "no mesh, default-deny NetworkPolicy that rejects", probe: rejected, control: rejected, detail: "may be the network's"},
		{name: "no mesh, no policy: plaintext answered", probe: answered.URL, control: answered.URL, detail: "5 2xx"},
		{name: "refused, but the mesh's call fails too", probe: refusing, control: refusing, detail: "may be the network's"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			control := load.Options{URL: tc.control}
			pb := probe{Check: mesh.CheckPlaintextRefused, What: "plaintext", Expect: expectRefused, Job: jobSpec{Control: &control}}
			c := judgeProbe(pb, outcome(t, tc.probe), outcome(t, tc.control))
			if c.Pass != tc.pass || !strings.Contains(c.Detail, tc.detail) {
				t.Errorf("pass = %v (%s), want %v mentioning %q", c.Pass, c.Detail, tc.pass, tc.detail)
			}
		})
	}
	t.Run("control reported nothing", func(t *testing.T) {
		t.Parallel()
		pb := probe{Check: mesh.CheckPlaintextRefused, Expect: expectRefused, Job: jobSpec{Control: &load.Options{}}}
		if c := judgeProbe(pb, outcome(t, refusing), nil); c.Pass {
			t.Errorf("passed without its control: %s", c.Detail)
		}
	})
}

// resetting is a proxy that wants mTLS and aborts a plaintext connection
// it accepted: it reads the request and answers with a TCP RST.
func resetting(t *testing.T) string {
	t.Helper()
	return listen(t, func(c net.Conn) {
		c.Read(make([]byte, 512))
		c.(*net.TCPConn).SetLinger(0)
		c.Close()
	})
}

// TestPlaintextRefusedNeighbourControl judges the plaintext probe of a
// profile with no same-pod control (ambient's), run from a neighbour of
// the control, on what the generator reports in each situation. Here a
// connection refused at connect is what a default-deny NetworkPolicy
// that rejects (an ICMP port unreachable or a RST to the SYN) gives with
// no mesh at all, so it must fail; only a refusal after the connection
// was accepted, as Envoy, ztunnel and linkerd-proxy refuse, passes.
func TestPlaintextRefusedNeighbourControl(t *testing.T) {
	t.Parallel()
	answered := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
	t.Cleanup(answered.Close)
	closing := listen(t, func(c net.Conn) {
		c.Read(make([]byte, 512))
		c.Close()
	})
	// No answer within the probe's timeout: what a dropping network
	// leaves the generator with, be it at connect or after.
	silent := listen(t, func(c net.Conn) {
		time.Sleep(2 * time.Second)
		c.Close()
	})
	rejected := closedPort(t)
	tests := []struct {
		name, probe, control string
		pass                 bool
		detail               string
	}{
		{name: "mesh closes plaintext after accept", probe: closing, control: answered.URL, pass: true, detail: "connection closed early=5"},
		{name: "mesh resets plaintext after accept", probe: resetting(t), control: answered.URL, pass: true, detail: "connection reset=5"},
		{name: "no mesh, default-deny NetworkPolicy that rejects", probe: rejected, control: answered.URL, detail: "connection refused=5"},
		{name: "no mesh, default-deny NetworkPolicy that drops", probe: silent, control: answered.URL, detail: "timeout=5"},
		{name: "no mesh, no policy: plaintext answered", probe: answered.URL, control: answered.URL, detail: "5 2xx"},
		{name: "refused after accept, but the control fails too", probe: closing, control: closing, detail: "which failed"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			at := jobSpec{Namespace: "ns-1", Node: "mb-load-1"}
			plain := probe{Check: mesh.CheckPlaintextRefused, What: "plaintext", Expect: expectRefused, Job: at, Control: controlCheck}
			control := probe{Check: controlCheck, What: "meshed", Expect: expectSuccess, Job: at}
			checks := withControls([]probe{control, plain}, []mesh.Check{
				judgeProbe(control, outcome(t, tc.control), nil), judgeProbe(plain, outcome(t, tc.probe), nil)})
			c := checks[1]
			if c.Pass != tc.pass || !strings.Contains(c.Detail, tc.detail) || !strings.Contains(c.Detail, "neighbour (same namespace ns-1 and node mb-load-1)") {
				t.Errorf("pass = %v (%s), want %v mentioning %q, judged beside a neighbour", c.Pass, c.Detail, tc.pass, tc.detail)
			}
			if !tc.pass && strings.Contains(tc.detail, "refused") && !strings.Contains(c.Detail, "connection refused at connect, which is a network that rejects it") {
				t.Errorf("detail %q does not say why a connection refused at connect does not count", c.Detail)
			}
		})
	}
}

// TestJobManifestControl: a probe with a control runs it as a second
// container of the same pod, and the probe's generator as the proxy's
// user, so that the pod's redirect lets its plaintext out.
func TestJobManifestControl(t *testing.T) {
	t.Parallel()
	control := load.Options{URL: "http://tier-1-app-a.ns-1:8080/", Connections: 1, Requests: 5, Timeout: time.Second}
	js := jobSpec{Namespace: "ns-1", Name: "p", Component: componentProbe, ServiceAccount: loadServiceAccount,
		Load: control, Control: &control, UID: 1337, Deadline: time.Minute}
	spec := jobManifest(js, "img", corev1.PullIfNotPresent).Spec.Template.Spec
	if len(spec.Containers) != 2 || spec.Containers[0].Name != jobContainer || spec.Containers[1].Name != controlContainer {
		t.Fatalf("containers %v, want %s and %s", spec.Containers, jobContainer, controlContainer)
	}
	probeC, controlC := spec.Containers[0], spec.Containers[1]
	if u := probeC.SecurityContext.RunAsUser; u == nil || *u != 1337 {
		t.Errorf("the probe runs as %v, want 1337", u)
	}
	if controlC.SecurityContext.RunAsUser != nil || *spec.SecurityContext.RunAsUser != nonRootUID {
		t.Errorf("the control runs as %v in a pod of %v, want the pod's %d", controlC.SecurityContext.RunAsUser, *spec.SecurityContext.RunAsUser, nonRootUID)
	}
	if strings.Join(controlC.Args, " ") != strings.Join(load.Args(control, ""), " ") {
		t.Errorf("control args %v", controlC.Args)
	}
	plain := jobManifest(jobSpec{Namespace: "ns-1", Name: "q", Load: control, Deadline: time.Minute}, "img", corev1.PullIfNotPresent).Spec.Template.Spec
	if len(plain.Containers) != 1 || plain.Containers[0].SecurityContext.RunAsUser != nil {
		t.Errorf("a Job without a control has containers %v", plain.Containers)
	}
}
