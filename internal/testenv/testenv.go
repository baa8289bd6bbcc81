// Package testenv is what tests share about their environment. It decides
// whether an integration test may run:
// under -short every integration test skips; otherwise a missing
// prerequisite (root, Envoy, a control plane, a browser) skips the test, or
// fails it when MESHBENCH_REQUIRE_INTEGRATION=1, as scripts/test.sh sets it
// in CI, so that a green run proves the integration tests really ran. It
// also hands out a loopback address that refuses connections.
package testenv

import (
	"fmt"
	"os"
	"testing"
)

// RequireEnv is the variable under which a missing prerequisite fails.
const RequireEnv = "MESHBENCH_REQUIRE_INTEGRATION"

// MissingPrefix begins the message of a test stopped for a missing
// prerequisite, so that a summary of the run can tell it from a failure.
const MissingPrefix = "missing prerequisite: "

// Strict reports whether missing prerequisites fail rather than skip.
func Strict() bool { return os.Getenv(RequireEnv) == "1" }

// Integration skips t under -short; call it first in every
// TestIntegration... test.
func Integration(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("integration test: skipped under -short")
	}
}

// Need stops t when a prerequisite is missing: ok false skips it, or fails
// it under MESHBENCH_REQUIRE_INTEGRATION=1. The message should say what is
// missing and how to get it.
func Need(t testing.TB, ok bool, format string, args ...any) {
	t.Helper()
	if ok {
		return
	}
	msg := MissingPrefix + fmt.Sprintf(format, args...)
	if Strict() {
		t.Fatal(msg + " (" + RequireEnv + "=1: a missing prerequisite fails)")
	}
	t.Skip(msg)
}

// NeedRoot is Need for root.
func NeedRoot(t testing.TB) {
	t.Helper()
	Need(t, os.Geteuid() == 0, "root (network namespaces, cgroups, iptables)")
}

// SkipUnderRace skips a timing- or allocation-sensitive test when the race
// detector is compiled in: it slows every memory access several-fold and
// allocates, so wall-clock bounds and allocation counts mean nothing
// there. why says what the test measures; the skip message names the race
// detector so that a -race run's skips are not mistaken for missing
// prerequisites.
func SkipUnderRace(t testing.TB, why string) {
	t.Helper()
	if Race {
		t.Skip("skipped under the race detector (-race): " + why)
	}
}
