// Package report regenerates a study's report from its stored results: an
// offline HTML file with inline SVG charts, Markdown with the same charts
// as SVG files, a comparison of two runs, and an export to the Service
// Mesh Performance (SMP) format. Every figure comes from analysis, with
// its interval.
package report
