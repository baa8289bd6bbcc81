package main

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestEnvoyReleasesInjectedIsThePreset checks that the injected step's
// study is the envoy-releases preset but for its name and the sidecars'
// injected_work from 1.39.0 on, so that a change to the preset cannot
// leave the validation measuring another study.
func TestEnvoyReleasesInjectedIsThePreset(t *testing.T) {
	body := func(path string) string {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		s := string(b)
		i := strings.Index(s, "apiVersion:")
		if i < 0 {
			t.Fatalf("%s: no apiVersion", path)
		}
		return s[i:]
	}
	preset := body("../../internal/study/presets/envoy-releases.yaml")
	injected := body("envoy-releases-injected.yaml")
	work := regexp.MustCompile(`, injected_work: [0-9]+\}`)
	var injectedAt []string
	for _, l := range strings.Split(injected, "\n") {
		if work.MatchString(l) {
			injectedAt = append(injectedAt, strings.Fields(l)[2])
		}
	}
	if want := "sidecar-1-39-0, sidecar-1-39-1, sidecar-1-39-3, sidecar-1-40-0,"; strings.Join(injectedAt, " ") != want {
		t.Errorf("injected_work on %q, want on %q", injectedAt, want)
	}
	got := work.ReplaceAllString(strings.Replace(injected, "name: envoy-releases-injected\n", "name: envoy-releases\n", 1), "}")
	if got != preset {
		t.Error("envoy-releases-injected.yaml differs from internal/study/presets/envoy-releases.yaml beyond its name and injected_work: copy the preset again")
	}
}
