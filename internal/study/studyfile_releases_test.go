package study

import (
	"strings"
	"testing"
)

func TestWithReleases(t *testing.T) {
	t.Parallel()
	src, err := PresetSource("envoy-releases")
	if err != nil {
		t.Fatal(err)
	}
	out, err := WithReleases(src, nil, []string{"1.38.3", "1.39.0"})
	if err != nil {
		t.Fatal(err)
	}
	s, err := parse(out, graphFiles(""), PlatformOverride{})
	if err != nil {
		t.Fatalf("the rewritten study does not parse: %v\n%s", err, out)
	}
	var got []string
	for _, m := range s.Meshes {
		got = append(got, m.Name+"="+m.Profile+"@"+m.ProxyVersion)
	}
	want := "baseline=baseline@ sidecar-1-38-3=sidecar@1.38.3 sidecar-1-39-0=sidecar@1.39.0 ambient-waypoint-1-38-3=ambient-waypoint@1.38.3 ambient-waypoint-1-39-0=ambient-waypoint@1.39.0"
	if strings.Join(got, " ") != want {
		t.Errorf("meshes %s\nwant   %s", strings.Join(got, " "), want)
	}
	if s.Name != "envoy-releases" || !strings.Contains(string(out), "# Envoy releases: the first real series") {
		t.Errorf("the rewrite lost the study's name or comments:\n%s", out)
	}
	short, err := WithReleases([]byte("name: s\nmeshes: [baseline, sidecar]\n"), nil, []string{"1.38.3"})
	if err != nil || !strings.Contains(string(short), "sidecar-1-38-3") || !strings.Contains(string(short), "- baseline") {
		t.Errorf("the shorthand list: %v\n%s", err, short)
	}
	if _, err := WithReleases(src, []string{"baseline"}, []string{"1.38.3"}); err == nil {
		t.Error("a baseline under releases was accepted")
	}
}
