// Package study reads study files (what to compare, on which platform),
// plans their cells in an interleaved order and runs them on a platform,
// writing raw results a report can be regenerated from. Its files are
// named by job: studyfile*.go read and validate the study file, plan*.go
// plan its cells and their scaling, calibration*.go measure the
// capacities and the app's cost that scaling calibrates on, and run*.go
// run the plan and record each cell.
package study
