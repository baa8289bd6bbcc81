// Package analysis turns a results directory into the figures a report
// shows: cells grouped by mesh and load configuration, the median over
// repetitions with a bootstrap 95% interval, and differences against a
// baseline or another run that say whether they are measurable at all.
package analysis
