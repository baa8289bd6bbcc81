// Package analysis turns a results directory into the figures a report
// shows: cells grouped by mesh and load configuration, the median over
// independent deployments with a distribution-free interval at its exact
// level, differences against a baseline (paired by round) or another run
// that say whether they are measurable at all, and the regression gate
// with its family-wise false-alarm rate (docs/statistics.md).
package analysis
