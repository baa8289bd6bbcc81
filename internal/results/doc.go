// Package results defines the on-disk format of a study's results and
// writes and reads it atomically: a study.json index, one JSON file per
// cell with its merged histograms and resource series, and the logs. The
// format is documented in docs/results.md.
package results
