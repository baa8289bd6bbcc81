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
	// The waypoint is left out under a release its lab data plane
	// cannot run; the sidecar takes it.
	older, err := WithReleases(src, nil, []string{"1.37.0", "1.38.2"})
	if err != nil {
		t.Fatal(err)
	}
	if s := string(older); !strings.Contains(s, "sidecar-1-37-0") || strings.Contains(s, "ambient-waypoint-1-37-0") || !strings.Contains(s, "ambient-waypoint-1-38-2") {
		t.Errorf("under 1.37.0 and 1.38.2, want the sidecar under both and the waypoint under 1.38.2 only:\n%s", s)
	}
	if _, err := WithReleases(src, []string{"baseline"}, []string{"1.38.3"}); err == nil {
		t.Error("a baseline under releases was accepted")
	}
}
