package cost

import "fmt"

// UnitPrices are what one vCPU and one GB of memory cost for a month. GB
// is the clouds' billing GB, which is a GiB.
type UnitPrices struct {
	PerVCPUMonth float64 `json:"usd_per_vcpu_month"`
	PerGBMonth   float64 `json:"usd_per_gb_month"`
	// Source says where the prices came from.
	Source string `json:"source"`
}

// DeriveUnitPrices prices a vCPU and a GB as the Istio blog did:
// the vCPU from two machine types with the same memory and different vCPU
// counts, the GB from two with the same vCPUs and different memory. The
// price difference over the resource difference is the unit price.
func DeriveUnitPrices(cpuPair, memPair [2]MachineType) (UnitPrices, error) {
	a, b := cpuPair[0], cpuPair[1]
	if a.MemoryGiB != b.MemoryGiB || a.VCPU == b.VCPU {
		return UnitPrices{}, fmt.Errorf("the vCPU price needs two machine types with the same memory and different vCPUs; %s has %d vCPU / %g GiB and %s %d vCPU / %g GiB", a.Name, a.VCPU, a.MemoryGiB, b.Name, b.VCPU, b.MemoryGiB)
	}
	c, d := memPair[0], memPair[1]
	if c.VCPU != d.VCPU || c.MemoryGiB == d.MemoryGiB {
		return UnitPrices{}, fmt.Errorf("the GB price needs two machine types with the same vCPUs and different memory; %s has %d vCPU / %g GiB and %s %d vCPU / %g GiB", c.Name, c.VCPU, c.MemoryGiB, d.Name, d.VCPU, d.MemoryGiB)
	}
	p := UnitPrices{
		PerVCPUMonth: (a.MonthlyUSD - b.MonthlyUSD) / float64(a.VCPU-b.VCPU),
		PerGBMonth:   (c.MonthlyUSD - d.MonthlyUSD) / (c.MemoryGiB - d.MemoryGiB),
		Source:       fmt.Sprintf("vCPU from %s vs %s, GB from %s vs %s", a.Name, b.Name, c.Name, d.Name),
	}
	if p.PerVCPUMonth <= 0 || p.PerGBMonth <= 0 {
		return UnitPrices{}, fmt.Errorf("%s: the larger machine type must cost more; got $%.2f per vCPU-month and $%.2f per GB-month", p.Source, p.PerVCPUMonth, p.PerGBMonth)
	}
	return p, nil
}

func (p UnitPrices) price(cores, gb float64) Consumed {
	return Consumed{CPUCores: cores, MemoryGB: gb, MonthlyCost: cores*p.PerVCPUMonth + gb*p.PerGBMonth}
}

// The Istio blog's pairs: a vCPU from n2-standard-4 against
// n2-highmem-2 (both 16 GB), a GB from n2-highmem-4 against n2-standard-4
// (both 4 vCPU).
var (
	defaultCPUPair = []string{"n2-standard-4", "n2-highmem-2"}
	defaultMemPair = []string{"n2-highmem-4", "n2-standard-4"}
)

// DefaultUnitPrices derives the unit prices from the catalog's GCP n2
// machine types by the Istio blog's pairs, as `meshbench cost` does when
// it is given neither prices nor pairs.
func DefaultUnitPrices(catalog *Catalog) (UnitPrices, error) {
	return pairPrices(catalog, defaultCPUPair, defaultMemPair)
}

func unitPrices(o Options, catalog *Catalog) (UnitPrices, error) {
	if o.VCPUMonth > 0 || o.GBMonth > 0 {
		if o.VCPUMonth <= 0 || o.GBMonth <= 0 {
			return UnitPrices{}, fmt.Errorf("give both --vcpu-month and --gb-month, or neither to derive them")
		}
		return UnitPrices{PerVCPUMonth: o.VCPUMonth, PerGBMonth: o.GBMonth, Source: "given"}, nil
	}
	cpu, mem := o.CPUPair, o.MemPair
	if len(cpu) == 0 {
		cpu = defaultCPUPair
	}
	if len(mem) == 0 {
		mem = defaultMemPair
	}
	return pairPrices(catalog, cpu, mem)
}

// pairPrices looks the two pairs of machine types up in the catalog and
// derives the unit prices from them.
func pairPrices(catalog *Catalog, cpuNames, memNames []string) (UnitPrices, error) {
	pair := func(names []string, what string) ([2]MachineType, error) {
		if len(names) != 2 {
			return [2]MachineType{}, fmt.Errorf("--%s-pair: want two machine types, got %d", what, len(names))
		}
		var p [2]MachineType
		for i, n := range names {
			m, err := catalog.Machine(n)
			if err != nil {
				return p, err
			}
			p[i] = m
		}
		return p, nil
	}
	cpu, err := pair(cpuNames, "cpu")
	if err != nil {
		return UnitPrices{}, err
	}
	mem, err := pair(memNames, "mem")
	if err != nil {
		return UnitPrices{}, err
	}
	return DeriveUnitPrices(cpu, mem)
}

// HoursPerMonth is the month the catalog's prices are for: 730 hours.
const HoursPerMonth = 730

// PerMillionRequests is what serving a million requests costs with cores
// and gb in use at rps requests a second: the resources' price for the
// time a million requests take at that rate.
func (p UnitPrices) PerMillionRequests(cores, gb, rps float64) float64 {
	if rps <= 0 {
		return 0
	}
	perSecond := (cores*p.PerVCPUMonth + gb*p.PerGBMonth) / (HoursPerMonth * 3600)
	return perSecond * 1e6 / rps
}
