package cost

import "fmt"

// Provider names how a managed Kubernetes service reserves node resources
// for the system, which decides a machine type's allocatable capacity.
type Provider string

// The providers whose published reservation formulas are implemented.
const (
	GKE Provider = "gke"
	EKS Provider = "eks"
	// AKS is AKS from Kubernetes 1.29 on; AKSLegacy is AKS before 1.29.
	AKS       Provider = "aks"
	AKSLegacy Provider = "aks-legacy"
)

// Reservation is what a provider holds back from pods on one node.
type Reservation struct {
	// KubeReserved is the CPU and memory set aside for the kubelet,
	// container runtime and operating system.
	KubeReserved Resources
	// Eviction is the kubelet's hard eviction threshold for memory, which
	// the scheduler also subtracts.
	Eviction int64
}

// Total is everything reserved: KubeReserved plus the eviction threshold.
func (r Reservation) Total() Resources {
	return r.KubeReserved.Add(Resources{Bytes: r.Eviction})
}

// bracket is a marginal rate applied to the part of a capacity between its
// threshold and the next bracket's threshold.
type bracket struct {
	threshold int64
	// perTenThousand is the rate in hundredths of a percent, so that 0.25%
	// stays an integer.
	perTenThousand int64
}

// marginal sums each bracket's rate over its slice of the capacity,
// rounding down as the providers' integer shell arithmetic does.
func marginal(capacity int64, brackets []bracket) int64 {
	var reserved int64
	for i, b := range brackets {
		top := capacity
		if i+1 < len(brackets) && brackets[i+1].threshold < capacity {
			top = brackets[i+1].threshold
		}
		if top > b.threshold {
			reserved += (top - b.threshold) * b.perTenThousand / 10000
		}
	}
	return reserved
}

// tieredCPUReserved is the CPU table GKE publishes and EKS's AMI copies:
// 6% of the first core, 1% of the second, 0.5% of the third and fourth,
// 0.25% of every core above four.
//
// Sources: cloud.google.com/kubernetes-engine/docs/concepts/plan-node-sizes
// ("Memory and CPU reservations"); awslabs/amazon-eks-ami files/bootstrap.sh,
// get_cpu_millicores_to_reserve, which cites the GKE page.
func tieredCPUReserved(milliCPU int64) int64 {
	return marginal(milliCPU, []bracket{{0, 600}, {1000, 100}, {2000, 50}, {4000, 25}})
}

// gigabyte is the "GB" of the tiered memory tables as the providers compute
// them: 1000 MiB, not 1 GiB. kubernetes/autoscaler, which has to predict
// GKE nodes' allocatable, computes it so (cloudprovider/gce/reserved.go:
// "Duplicating an upstream bug treating GB as 1000*MiB"), and AKS's
// published example (7 GB node: 0.75 + 0.25*4 + 0.20*3 = 2.35 GB reserved)
// only adds up in these units too. GKE's page itself writes GiB.
const gigabyte = 1000 * MiB

// tieredMemoryReserved is the regressive memory table of GKE and of AKS
// before 1.29: 25% of the first 4 GB, 20% of the next 4, 10% of the next 8,
// 6% of the next 112 and 2% of the rest. GKE reserves a flat 255 MiB on
// machines with less than 1 GB.
func tieredMemoryReserved(bytes int64) int64 {
	return marginal(bytes, []bracket{
		{0, 2500}, {4 * gigabyte, 2000}, {8 * gigabyte, 1000}, {16 * gigabyte, 600}, {128 * gigabyte, 200},
	})
}

// aksCPUReserved is AKS's kube-reserved CPU table: millicores by core count
// (learn.microsoft.com/azure/aks/node-resource-reservations). Core counts
// between its rows are interpolated linearly, and counts above 64 extend
// its last step (10m a core): an approximation the table does not state.
var aksCPUReserved = []struct{ cores, milli int64 }{
	{1, 60}, {2, 100}, {4, 140}, {8, 180}, {16, 260}, {32, 420}, {64, 740},
}

func aksCPU(cores int64) int64 {
	t := aksCPUReserved
	if cores <= t[0].cores {
		return t[0].milli
	}
	for i := 1; i < len(t); i++ {
		if cores <= t[i].cores {
			lo, hi := t[i-1], t[i]
			return lo.milli + (hi.milli-lo.milli)*(cores-lo.cores)/(hi.cores-lo.cores)
		}
	}
	lo, hi := t[len(t)-2], t[len(t)-1]
	return hi.milli + (hi.milli-lo.milli)/(hi.cores-lo.cores)*(cores-hi.cores)
}

// Reserve returns what a provider holds back on a node with this many
// vCPUs, bytes of memory and maximum pods.
func Reserve(p Provider, vcpu int, memory int64, maxPods int) (Reservation, error) {
	cpu := int64(vcpu) * 1000
	switch p {
	case GKE:
		mem := tieredMemoryReserved(memory)
		if memory < gigabyte {
			mem = 255 * MiB
		}
		return Reservation{KubeReserved: Resources{tieredCPUReserved(cpu), mem}, Eviction: 100 * MiB}, nil
	case EKS:
		// bootstrap.sh: kubeReserved memory = 11 MiB per pod + 255 MiB,
		// evictionHard memory.available 100Mi.
		if maxPods <= 0 {
			return Reservation{}, fmt.Errorf("eks reserves memory by max_pods; max_pods must be positive")
		}
		mem := (11*int64(maxPods) + 255) * MiB
		return Reservation{KubeReserved: Resources{tieredCPUReserved(cpu), mem}, Eviction: 100 * MiB}, nil
	case AKS:
		// The smaller of 20 MB per pod + 50 MB and 25% of memory, and a
		// 100Mi eviction threshold.
		if maxPods <= 0 {
			return Reservation{}, fmt.Errorf("aks reserves memory by max_pods; max_pods must be positive")
		}
		mem := min((20*int64(maxPods)+50)*MiB, memory/4)
		return Reservation{KubeReserved: Resources{aksCPU(int64(vcpu)), mem}, Eviction: 100 * MiB}, nil
	case AKSLegacy:
		return Reservation{KubeReserved: Resources{aksCPU(int64(vcpu)), tieredMemoryReserved(memory)}, Eviction: 750 * MiB}, nil
	}
	return Reservation{}, fmt.Errorf("unknown provider %q; want %s, %s, %s or %s", p, GKE, EKS, AKS, AKSLegacy)
}
