// Package study reads study files (what to compare, on which platform),
// plans their cells in an interleaved order and runs them on a platform,
// writing raw results a report can be regenerated from.
package study
