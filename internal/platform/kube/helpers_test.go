package kube

import (
	"strconv"
	"strings"
	"testing"
)

func splitLines(s string) []string { return strings.Split(s, "\n") }

func itoa(i int) string { return strconv.Itoa(i) }

// mustProfile looks a profile up, failing the test if Kubernetes does not
// run it.
func mustProfile(t *testing.T, name string) profile {
	t.Helper()
	pr, err := lookupProfile(name)
	if err != nil {
		t.Fatal(err)
	}
	return pr
}
