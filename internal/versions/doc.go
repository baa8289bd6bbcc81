// Package versions is the one table of what meshbench pins: the Envoy the
// lab's data planes are written for, the Helm charts the kubernetes
// platform installs, and the images it runs. Code reads the pins from
// here, and the documentation quotes them; a test in package docs fails
// when a pin quoted in README.md or docs/*.md disagrees with this table.
package versions
