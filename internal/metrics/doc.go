// Package metrics holds the measurement types that every other package
// records into and reads from: latency histograms and resource time series.
// Both serialize losslessly, so that results merge exactly and every
// published number can be recomputed from stored data.
package metrics
