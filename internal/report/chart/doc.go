// Package chart draws the report's charts as small, self-contained SVG:
// line charts with linear or logarithmic axes and optional error bars, and
// grouped bar charts with error bars. The output needs no script or font
// download and is byte-for-byte reproducible.
package chart
