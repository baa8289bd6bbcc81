package cost

import (
	"cmp"
	_ "embed"
	"fmt"
	"math"
	"strings"
)

// MachineType is a node a cluster can be built from.
type MachineType struct {
	Name     string   `json:"name"`
	Provider Provider `json:"provider"`
	VCPU     int      `json:"vcpu"`
	// MemoryGiB is the machine's memory as sold. The providers' formulas
	// apply to the kubelet's capacity, a little less than this (the kernel
	// keeps some), so computed allocatable memory is slightly optimistic;
	// set Allocatable to a measured node's figure for exact answers.
	MemoryGiB float64 `json:"memory_gib"`
	// MaxPods is the kubelet's pod limit, which also sets EKS's and AKS's
	// memory reservation.
	MaxPods int `json:"max_pods"`
	// MonthlyUSD is the price of one node for a month. It is an input:
	// list prices vary by region, date and discount.
	MonthlyUSD float64 `json:"monthly_usd"`
	// Allocatable, when set, replaces the provider's formula.
	Allocatable *Resources `json:"allocatable,omitempty"`
}

// Memory is the machine's memory in bytes.
func (m MachineType) Memory() int64 { return int64(math.Round(m.MemoryGiB * float64(GiB))) }

// NodeAllocatable is what the scheduler can give pods on one node of this
// type: the capacity less the provider's reservation, or the Allocatable
// override.
func (m MachineType) NodeAllocatable() (Resources, error) {
	if m.Allocatable != nil {
		return *m.Allocatable, nil
	}
	r, err := Reserve(m.Provider, m.VCPU, m.Memory(), m.MaxPods)
	if err != nil {
		return Resources{}, fmt.Errorf("machine type %s: %w", m.Name, err)
	}
	a := Resources{MilliCPU: int64(m.VCPU) * 1000, Bytes: m.Memory()}.Sub(r.Total())
	if a.MilliCPU <= 0 || a.Bytes <= 0 {
		return Resources{}, fmt.Errorf("machine type %s: nothing is left for pods after the %s reservation (%v)", m.Name, m.Provider, r.Total())
	}
	return a, nil
}

func (m MachineType) validate() error {
	switch {
	case m.Name == "":
		return fmt.Errorf("machine type without a name")
	case m.VCPU <= 0:
		return fmt.Errorf("machine type %s: vcpu must be positive", m.Name)
	case m.MemoryGiB <= 0:
		return fmt.Errorf("machine type %s: memory_gib must be positive", m.Name)
	case m.MaxPods < 0:
		return fmt.Errorf("machine type %s: max_pods must not be negative", m.Name)
	case m.MonthlyUSD < 0:
		return fmt.Errorf("machine type %s: monthly_usd must not be negative", m.Name)
	}
	_, err := m.NodeAllocatable()
	return err
}

// Catalog is the machine types meshbench can price, with the price
// table's name and date and a note saying where its prices come from.
type Catalog struct {
	// PricesName and PricesDate name the price table and the day its
	// prices were read, for every figure priced with it.
	PricesName string        `json:"prices_name,omitempty"`
	PricesDate string        `json:"prices_date,omitempty"`
	PricesNote string        `json:"prices_note,omitempty"`
	Machines   []MachineType `json:"machines"`
}

//go:embed catalog.yaml
var defaultCatalogYAML []byte

// LoadCatalog returns the built-in catalog (common GKE n2, EKS m5/c5 and
// AKS Dsv5 machine types with on-demand list prices) with the machine types
// of the YAML file at path, when path is not empty, added to it. A type the
// file names replaces the built-in one of that name, and the file's
// prices_note, when set, replaces the built-in note.
func LoadCatalog(path string) (*Catalog, error) {
	c := &Catalog{}
	if err := decodeYAML(defaultCatalogYAML, c); err != nil {
		return nil, fmt.Errorf("built-in catalog: %w", err)
	}
	if path == "" {
		return c, nil
	}
	var extra Catalog
	if err := readYAML(path, &extra); err != nil {
		return nil, err
	}
	for _, m := range extra.Machines {
		if err := m.validate(); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		c.put(m)
	}
	if extra.PricesNote != "" {
		c.PricesNote = extra.PricesNote
	}
	if len(extra.Machines) > 0 || extra.PricesName != "" {
		// Some prices are the file's: the table is named after it, and
		// dated only if the file says when its prices were read.
		c.PricesName, c.PricesDate = cmp.Or(extra.PricesName, path), extra.PricesDate
	}
	return c, nil
}

func (c *Catalog) put(m MachineType) {
	for i := range c.Machines {
		if c.Machines[i].Name == m.Name {
			c.Machines[i] = m
			return
		}
	}
	c.Machines = append(c.Machines, m)
}

// Machine returns the named machine type.
func (c *Catalog) Machine(name string) (MachineType, error) {
	var names []string
	for _, m := range c.Machines {
		if m.Name == name {
			return m, nil
		}
		names = append(names, m.Name)
	}
	return MachineType{}, fmt.Errorf("unknown machine type %q; the catalog has %s (add yours with --catalog FILE)", name, strings.Join(names, ", "))
}

// PriceTable names the catalog's price table and its date, as every priced
// figure cites it: "meshbench built-in list prices, 2026-11-24".
func (c *Catalog) PriceTable() string {
	if c.PricesDate == "" {
		return c.PricesName + ", undated"
	}
	return c.PricesName + ", " + c.PricesDate
}
