package cost

import "fmt"

// ConsumptionEstimate is a consumption pricing with its unit prices.
type ConsumptionEstimate struct {
	Prices     UnitPrices       `json:"prices"`
	Projection *Projection      `json:"projection,omitempty"`
	Rows       []ConsumptionRow `json:"rows"`
}

// EstimateConsumption reads the usage file and prices it.
func EstimateConsumption(o Options, catalog *Catalog) (*ConsumptionEstimate, error) {
	var usages []Usage
	if err := readYAML(o.UsageFile, &usages); err != nil {
		return nil, err
	}
	prices, err := unitPrices(o, catalog)
	if err != nil {
		return nil, err
	}
	e := &ConsumptionEstimate{Prices: prices}
	if o.ProjectRPS > 0 || o.ProjectNodes > 0 {
		e.Projection = &Projection{RequestRate: o.ProjectRPS, Nodes: o.ProjectNodes}
	}
	e.Rows, err = Consumption(usages, prices, e.Projection)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", o.UsageFile, err)
	}
	return e, nil
}
