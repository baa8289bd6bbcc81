// Command testsummary reads `go test -json` on stdin and prints, per
// package, how many TestIntegration... tests ran, passed, failed and
// skipped, with the output of every failed test; with -strict it fails
// when any integration test skipped, naming each with its reason, so that
// a green run proves the integration tests really ran. scripts/test.sh
// pipes the integration run through it.
package main
