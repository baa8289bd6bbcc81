package cluster

import (
	"net/netip"
	"testing"
)

func TestAddressPlan(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		index int
		ip    string
		cidr  string
	}{
		{name: "first node", index: 1, ip: "10.255.0.1", cidr: "10.244.1.0/24"},
		{name: "fourth node", index: 4, ip: "10.255.0.4", cidr: "10.244.4.0/24"},
		{name: "last node", index: maxNodes, ip: "10.255.0.250", cidr: "10.244.250.0/24"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := nodeIP(tt.index).String(); got != tt.ip {
				t.Errorf("nodeIP = %s, want %s", got, tt.ip)
			}
			if got := nodePodCIDR(tt.index).String(); got != tt.cidr {
				t.Errorf("nodePodCIDR = %s, want %s", got, tt.cidr)
			}
			if !NodeNet.Contains(nodeIP(tt.index)) || !PodNet.Contains(nodePodCIDR(tt.index).Addr()) {
				t.Error("outside the lab's ranges")
			}
		})
	}
}

func TestAllocatorOrderWrapAndFull(t *testing.T) {
	t.Parallel()
	a := newAllocator(netip.MustParseAddr("10.0.0.1"), netip.MustParseAddr("10.0.0.3"))
	want := []string{"10.0.0.1", "10.0.0.2", "10.0.0.3"}
	for _, w := range want {
		ip, err := a.Allocate()
		if err != nil || ip.String() != w {
			t.Fatalf("Allocate = %v, %v; want %s", ip, err, w)
		}
	}
	if ip, err := a.Allocate(); err == nil {
		t.Fatalf("full range gave %s", ip)
	}
	// A freed address is reused only after the others: here it is the only one.
	a.Release(netip.MustParseAddr("10.0.0.2"))
	if ip, err := a.Allocate(); err != nil || ip.String() != "10.0.0.2" {
		t.Fatalf("after release: %v, %v", ip, err)
	}
}

func TestAllocatorDoesNotReuseAtOnce(t *testing.T) {
	t.Parallel()
	a := podAllocator(nodePodCIDR(1))
	first, _ := a.Allocate()
	if first.String() != "10.244.1.2" {
		t.Fatalf("first pod address %s, want 10.244.1.2", first)
	}
	a.Release(first)
	next, _ := a.Allocate()
	if next == first {
		t.Errorf("freed address %s reused at once", first)
	}
}

func TestAllocatorReserve(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		ip      string
		wantErr bool
	}{
		{name: "in range", ip: "10.96.0.20"},
		{name: "below range", ip: "10.96.0.1", wantErr: true},
		{name: "outside", ip: "10.97.0.1", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := serviceAllocator()
			err := a.Reserve(netip.MustParseAddr(tt.ip))
			if (err != nil) != tt.wantErr {
				t.Fatalf("Reserve(%s) = %v, wantErr %v", tt.ip, err, tt.wantErr)
			}
			if err == nil && a.Reserve(netip.MustParseAddr(tt.ip)) == nil {
				t.Error("reserved twice")
			}
		})
	}
}
