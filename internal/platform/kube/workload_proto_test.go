package kube

import (
	"testing"

	"github.com/meshbench/meshbench/internal/topology"
)

func TestServicePortProtocol(t *testing.T) {
	t.Parallel()
	g, err := topology.Parse([]byte(`
name: p
entry: a
services:
- name: a
  script: [{call: {service: g, protocol: grpc}}, {call: {service: m, protocol: grpc}}, {call: h}, {call: {service: two, protocol: h2c}}]
- name: g
- name: h
  script: [{call: m}]
- name: m
- name: two
`))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct{ service, want string }{
		{"a", "http"},    // the entry, called over HTTP/1.1 by the generator
		{"g", "grpc"},    // gRPC callers only: Istio carries HTTP/2
		{"h", "http"},    // HTTP/1.1 callers only
		{"m", "<auto>"},  // gRPC and HTTP/1.1 callers: Istio detects each
		{"two", "http2"}, // h2c callers only
	}
	for _, tt := range tests {
		svc := service("ns-1", *g.Service(tt.service), appProtocol(g, tt.service))
		p := svc.Spec.Ports[0]
		got := "<auto>"
		if p.AppProtocol != nil {
			got = *p.AppProtocol
		}
		if got != tt.want || (p.AppProtocol == nil) != (p.Name == "app") {
			t.Errorf("%s: appProtocol %s, port name %q; want %s", tt.service, got, p.Name, tt.want)
		}
	}
}
