// Package cost prices what a service mesh adds to the monthly bill: nodes
// from bin-packing resource requests, and dollars from measured consumption.
package cost
