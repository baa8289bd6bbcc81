package cost

import (
	"math"
	"strings"
	"testing"
)

// The providers' published examples. Where a document writes "GB" for
// 1000 MiB (AKS's examples add 0.1 GB of eviction threshold for 100Mi), the
// capacities are given in the document's own units.
func TestReservePublishedExamples(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		provider Provider
		vcpu     int
		memory   int64
		maxPods  int
		// Zero fields are not checked.
		wantKubeCPU    int64
		wantKubeMemory int64
		wantTotalMem   int64
		wantAllocCPU   int64
		wantAllocMemGi float64 // checked to the example's precision
		tolGi          float64
	}{
		{
			// cloud.google.com/kubernetes-engine/docs/concepts/plan-node-sizes,
			// "Check allocatable resources on a node": capacity cpu "4",
			// allocatable cpu 3920m.
			name: "gke 4 vCPU node", provider: GKE, vcpu: 4, memory: 16 * GiB,
			wantKubeCPU: 80, wantAllocCPU: 3920,
		},
		{
			// learnk8s.io/allocatable-resources, GKE example: n1-standard-2,
			// 2 vCPU and 7.5 GiB: 70m reserved, 1.7 GiB + 100 MiB eviction,
			// about 5.7 GiB allocatable (GKE's old node-allocatable table
			// gave 1.93 CPU and 5.7 GB for this type).
			name: "gke n1-standard-2", provider: GKE, vcpu: 2, memory: 7680 * MiB,
			wantKubeCPU: 70, wantAllocCPU: 1930, wantAllocMemGi: 5.7, tolGi: 0.05,
		},
		{
			// Same table: 16 cores keep 110m (60 + 10 + 2x5 + 12x2.5).
			name: "gke 16 vCPU", provider: GKE, vcpu: 16, memory: 64 * GiB,
			wantKubeCPU: 110, wantAllocCPU: 15890,
		},
		{
			// GKE: machines under 1 GB keep a flat 255 MiB.
			name: "gke small machine", provider: GKE, vcpu: 1, memory: 614 * MiB,
			wantKubeCPU: 60, wantKubeMemory: 255 * MiB, wantTotalMem: 355 * MiB,
		},
		{
			// awslabs/amazon-eks-ami files/bootstrap.sh: kubeReserved memory
			// 11 x 29 + 255 = 574Mi for m5.large (max pods 29 in
			// eni-max-pods.txt), CPU 60 + 10 = 70m, evictionHard 100Mi.
			name: "eks m5.large", provider: EKS, vcpu: 2, memory: 8 * GiB, maxPods: 29,
			wantKubeCPU: 70, wantKubeMemory: 574 * MiB, wantTotalMem: 674 * MiB, wantAllocCPU: 1930,
		},
		{
			// m5.4xlarge: 234 pods, 11 x 234 + 255 = 2829Mi; 16 cores: 110m.
			name: "eks m5.4xlarge", provider: EKS, vcpu: 16, memory: 64 * GiB, maxPods: 234,
			wantKubeCPU: 110, wantKubeMemory: 2829 * MiB,
		},
		{
			// learn.microsoft.com/azure/aks/node-resource-reservations, AKS
			// 1.29 and later: "8 GB memory and 30 max pods: 20 MB x 30 + 50 MB
			// = 650 MB kube-reserved; allocatable 8 - 0.65 - 0.1 = 7.25 GB".
			name: "aks 8 GB 30 pods", provider: AKS, vcpu: 2, memory: 8 * gigabyte, maxPods: 30,
			wantKubeCPU: 100, wantKubeMemory: 650 * MiB, wantTotalMem: 750 * MiB,
		},
		{
			// Same page: "4 GB and 70 max pods: 25% x 4 GB = 1000 MB, as
			// that is less than 20 MB x 70 + 50 MB = 1450 MB".
			name: "aks 4 GB 70 pods", provider: AKS, vcpu: 4, memory: 4 * gigabyte, maxPods: 70,
			wantKubeCPU: 140, wantKubeMemory: 1000 * MiB,
		},
		{
			// Same page, before 1.29: "a node with 7 GB reports 34% of
			// memory not allocatable: 0.75 + 0.25 x 4 + 0.20 x 3 = 2.35 GB".
			name: "aks before 1.29, 7 GB", provider: AKSLegacy, vcpu: 2, memory: 7 * gigabyte,
			wantKubeCPU: 100, wantKubeMemory: 1600 * MiB, wantTotalMem: 2350 * MiB,
		},
		{
			// AKS CPU table: 8 cores keep 180m, 32 keep 420m, 64 keep 740m.
			name: "aks 8 cores", provider: AKS, vcpu: 8, memory: 32 * GiB, maxPods: 110, wantKubeCPU: 180,
		},
		{name: "aks 32 cores", provider: AKS, vcpu: 32, memory: 128 * GiB, maxPods: 110, wantKubeCPU: 420},
		{name: "aks 64 cores", provider: AKS, vcpu: 64, memory: 256 * GiB, maxPods: 110, wantKubeCPU: 740},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r, err := Reserve(tc.provider, tc.vcpu, tc.memory, tc.maxPods)
			if err != nil {
				t.Fatal(err)
			}
			alloc := Resources{MilliCPU: int64(tc.vcpu) * 1000, Bytes: tc.memory}.Sub(r.Total())
			check := func(what string, got, want int64) {
				if want != 0 && got != want {
					t.Errorf("%s = %d, want %d", what, got, want)
				}
			}
			check("kube-reserved cpu", r.KubeReserved.MilliCPU, tc.wantKubeCPU)
			check("kube-reserved memory", r.KubeReserved.Bytes, tc.wantKubeMemory)
			check("reserved memory with eviction", r.Total().Bytes, tc.wantTotalMem)
			check("allocatable cpu", alloc.MilliCPU, tc.wantAllocCPU)
			if tc.wantAllocMemGi != 0 {
				if got := float64(alloc.Bytes) / float64(GiB); math.Abs(got-tc.wantAllocMemGi) > tc.tolGi {
					t.Errorf("allocatable memory = %.3f GiB, want %.2f ± %.2f", got, tc.wantAllocMemGi, tc.tolGi)
				}
			}
		})
	}
}

// AKS's 1.29 example in percent: 7.25 of 8 GB is 90.625% allocatable.
func TestAKSAllocatableShare(t *testing.T) {
	t.Parallel()
	r, err := Reserve(AKS, 2, 8*gigabyte, 30)
	if err != nil {
		t.Fatal(err)
	}
	if got := float64(8*gigabyte-r.Total().Bytes) / float64(8*gigabyte); got != 0.90625 {
		t.Fatalf("allocatable share = %v, want 0.90625", got)
	}
}

// The tiered tables reserve more as machines grow, and never more at the
// margin than the first tier's rate.
func TestTieredReservationsGrow(t *testing.T) {
	t.Parallel()
	for _, p := range []Provider{GKE, EKS, AKS, AKSLegacy} {
		prev := Reservation{}
		for _, cores := range []int{1, 2, 4, 8, 16, 32, 48, 64, 96} {
			r, err := Reserve(p, cores, int64(cores)*4*GiB, 110)
			if err != nil {
				t.Fatal(err)
			}
			if r.KubeReserved.MilliCPU < prev.KubeReserved.MilliCPU || r.KubeReserved.Bytes < prev.KubeReserved.Bytes {
				t.Errorf("%s: %d cores reserve %v, less than the smaller machine's %v", p, cores, r.KubeReserved, prev.KubeReserved)
			}
			prev = r
		}
	}
}

func TestAKSCPUInterpolates(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		cores int64
		want  int64
	}{
		{"row", 16, 260},
		{"between rows", 48, 580},
		{"above the table", 96, 1060},
		{"below the table", 0, 60},
	}
	for _, tc := range tests {
		if got := aksCPU(tc.cores); got != tc.want {
			t.Errorf("%s: aksCPU(%d) = %d, want %d", tc.name, tc.cores, got, tc.want)
		}
	}
}

func TestReserveErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		provider Provider
		maxPods  int
		want     string
	}{
		{"unknown provider", "openstack", 110, "unknown provider"},
		{"eks without max pods", EKS, 0, "max_pods"},
		{"aks without max pods", AKS, 0, "max_pods"},
	}
	for _, tc := range tests {
		_, err := Reserve(tc.provider, 4, 16*GiB, tc.maxPods)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error = %v, want one containing %q", tc.name, err, tc.want)
		}
	}
}
