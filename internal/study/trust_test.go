package study

import (
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/meshbench/meshbench/internal/results"
)

// TestLoadRunRefusesWhatReachesOutside resumes results directories whose
// study, written by someone else, names what reaches outside the
// directory: a cluster, an image, a chart, a URL. Each is refused, naming
// the field at its line and --trust-study, and, on that field's own line,
// the flag that can give it instead where there is one (--image,
// --context, --kubeconfig, --platform) and none where there is not; with
// --trust-study, or with that flag, the study loads.
func TestLoadRunRefusesWhatReachesOutside(t *testing.T) {
	t.Parallel()
	base := string(readFile(t, "testdata/valid-kubernetes.yaml"))
	kube := func(extra string) string {
		return strings.Replace(base, "    image: registry.example/meshbench:v0.1.0\n", "    image: registry.example/meshbench:v0.1.0\n"+extra, 1)
	}
	tests := []struct {
		name  string
		study string
		// field is the path refused, line its line in the study file.
		field string
		line  int
		// flag, when set, is the command line's way to give the field,
		// and override what gives it there.
		flag     string
		override PlatformOverride
	}{
		{name: "foreign chart repository", study: kube("    charts:\n      istiod: {chart: istiod, repo: https://charts.evil.example}\n"),
			field: "platform.kubernetes.charts.istiod.repo", line: 14},
		{name: "chart from a local path", study: kube("    charts:\n      istiod: {chart: /tmp/istiod}\n"),
			field: "platform.kubernetes.charts.istiod.chart", line: 14},
		{name: "chart version", study: kube("    charts:\n      istio-base: {version: 1.20.0}\n"),
			field: "platform.kubernetes.charts.istio-base.version", line: 14},
		{name: "chart values", study: kube("    charts:\n      istiod:\n        values: {global: {hub: evil.example}}\n"),
			field: "platform.kubernetes.charts.istiod.values", line: 15},
		{name: "gateway image", study: kube("    gateway_image: evil.example/envoy:latest\n"),
			field: "platform.kubernetes.gateway_image", line: 13},
		{name: "prometheus", study: kube("    prometheus: http://169.254.169.254/\n"),
			field: "platform.kubernetes.prometheus", line: 13},
		{name: "image", study: base, field: "platform.kubernetes.image", line: 12,
			flag: "--image", override: PlatformOverride{Context: "mine", Image: "registry.example/mine:v1"}},
		{name: "context", study: base, field: "platform.kubernetes.context", line: 11,
			flag: "--context", override: PlatformOverride{Context: "mine", Image: "registry.example/mine:v1"}},
		{name: "kubeconfig", study: kube("    kubeconfig: /tmp/evil-kubeconfig\n"), field: "platform.kubernetes.kubeconfig", line: 13,
			flag: "--kubeconfig", override: PlatformOverride{Kubeconfig: "/home/me/.kube/config", Context: "mine", Image: "registry.example/mine:v1"}},
		{name: "a cluster at all", study: strings.Replace(base, "    context: bench\n", "", 1), field: "platform.type", line: 6,
			flag: "--platform kubernetes", override: PlatformOverride{Type: PlatformKubernetes, Image: "registry.example/mine:v1"}},
		{name: "another mesh's cluster", study: strings.Replace(base, "- profile: ambient\n", "- profile: ambient\n  context: other\n", 1),
			field: "meshes[1].context", line: 18},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			if err := results.WriteFile(dir, results.StudyFile, []byte(tt.study)); err != nil {
				t.Fatal(err)
			}
			_, _, err := LoadRun(dir, PlatformOverride{}, false)
			if err == nil {
				t.Fatal("LoadRun honoured a study from the results directory that reaches outside it")
			}
			// The field's own line of the error: other fields of the study
			// are refused beside it, each on a line of its own.
			at := filepath.Join(dir, results.StudyFile) + ":" + strconv.Itoa(tt.line) + ":"
			var line string
			for _, l := range strings.Split(err.Error(), "\n") {
				if strings.Contains(l, at) && strings.Contains(l, tt.field+": ") {
					line = l
				}
			}
			if line == "" {
				t.Fatalf("LoadRun: %v\nwant a line refusing %s at %s", err, tt.field, at)
			}
			if !strings.Contains(line, "pass --trust-study if you trust whoever wrote "+dir) {
				t.Errorf("%s\nwant it to name --trust-study", line)
			}
			switch {
			case tt.flag != "" && !strings.Contains(line, "give it on the command line, "+tt.flag):
				t.Errorf("%s\nwant it to name %s", line, tt.flag)
			case tt.flag == "" && strings.Contains(line, "give it on the command line"):
				t.Errorf("%s\nnames a flag, where there is none for %s", line, tt.field)
			}
			if _, _, err := LoadRun(dir, PlatformOverride{}, true); err != nil {
				t.Errorf("LoadRun with --trust-study: %v", err)
			}
			if tt.flag != "" {
				if _, _, err := LoadRun(dir, tt.override, false); err != nil {
					t.Errorf("LoadRun with %s: %v", tt.flag, err)
				}
			}
		})
	}
}

// TestLoadRunOfALabStudyNeedsNoTrust: a lab study's directory names
// nothing outside it; it resumes as it is, and a Kubernetes study's does
// when the command line names the cluster and image and the study adds
// nothing else.
func TestLoadRunOfALabStudyNeedsNoTrust(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "results")
	interrupted(t, dir)
	if _, _, err := LoadRun(dir, PlatformOverride{}, false); err != nil {
		t.Fatalf("LoadRun of a lab study: %v", err)
	}
}

// TestResumeRefusesAnIndexWithoutPlatform resumes a directory whose cells
// were measured but whose index records no platform, as an edited index
// would: the check that the experiment is the one that started cannot
// compare, so the resume is refused before the platform comes up, unless
// --resume-anyway.
func TestResumeRefusesAnIndexWithoutPlatform(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "results")
	interrupted(t, dir)
	ix, err := results.ReadIndex(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(ix.Cells) == 0 {
		t.Fatal("the interrupted run measured no cell")
	}
	ix.Provenance.Platform = results.Index{}.Provenance.Platform
	if err := results.WriteJSON(dir, results.IndexFile, ix); err != nil {
		t.Fatal(err)
	}
	f := newFake()
	o := runOptions(t, studySource, f, dir, nil)
	o.Resume = true
	_, err = Run(context.Background(), o)
	if err == nil || !strings.Contains(err.Error(), "records no platform") || !strings.Contains(err.Error(), "--resume-anyway") {
		t.Fatalf("Run: %v, want the resume refused for want of the platform it started on", err)
	}
	if f.count("up") != 0 || f.measures != 0 {
		t.Fatalf("a refused resume brought the platform up (%d) or measured (%d)", f.count("up"), f.measures)
	}
	o.ResumeAnyway = true
	if ix := run(t, o); !ix.Complete {
		t.Fatal("resumed anyway, the run did not complete")
	}
}
