package study

import (
	"fmt"
	"maps"
	"slices"
)

// A study resumed from a results directory is the directory's, and a
// results directory can come from anyone: meshbench runs as root, with
// the user's cluster credentials. What in it reaches outside the
// directory (a cluster to act on, an image or chart to run there, a URL
// to query, a kubeconfig whose exec plugin runs) is refused unless the
// command line gives it or the user vouches for the directory with
// --trust-study. What stays inside (the graph, the load, the sweeps,
// the meshes' profiles and proxy settings) is honoured, within the
// bounds any study has.

// TrustFlag is the flag that honours everything a resumed study names.
const TrustFlag = "--trust-study"

// reachOutside is one field of a study that reaches outside its results
// directory.
type reachOutside struct {
	path, value string
	// what it reaches, for the message.
	what string
	// flag, when set, is the command line's way to give it instead.
	flag string
}

// untrusted refuses every field of s, a study read from the results
// directory dir with the command line's settings o applied, that reaches
// outside the directory and that the command line did not give.
func (s *Study) untrusted(o PlatformOverride, dir string) FieldErrors {
	var out []reachOutside
	add := func(path, value, what, flag string) {
		if value != "" {
			out = append(out, reachOutside{path: path, value: value, what: what, flag: flag})
		}
	}
	if s.Platform.Type == PlatformKubernetes && o.Type == "" && o.Kubeconfig == "" && o.Context == "" {
		add("platform.type", PlatformKubernetes, "a cluster to act on, the kubeconfig's current context", "--platform kubernetes (with --context NAME)")
	}
	if k := s.Platform.Kubernetes; k != nil {
		if o.Kubeconfig == "" {
			add("platform.kubernetes.kubeconfig", k.Kubeconfig, "a kubeconfig, whose exec plugin client-go runs", "--kubeconfig FILE")
		}
		if o.Context == "" {
			add("platform.kubernetes.context", k.Context, "the cluster to act on", "--context NAME")
		}
		if o.Image == "" {
			add("platform.kubernetes.image", k.Image, "the image every app and load pod runs", "--image REF")
		}
		add("platform.kubernetes.gateway_image", k.GatewayImage, "the image the ingress gateway runs", "")
		add("platform.kubernetes.prometheus", k.Prometheus, "a URL meshbench queries and whose answers it records", "")
		for _, key := range slices.Sorted(maps.Keys(k.Charts)) {
			c, path := k.Charts[key], "platform.kubernetes.charts."+key
			add(path+".chart", c.Chart, "a chart to install, a local path or a name in a repository", "")
			add(path+".repo", c.Repo, "a chart repository to fetch from", "")
			add(path+".version", c.Version, "another version of the chart to install", "")
			if len(c.Values) > 0 {
				add(path+".values", fmt.Sprintf("%d values", len(c.Values)), "the chart's values, which choose its images and privileges", "")
			}
		}
	}
	for i, m := range s.Meshes {
		add(fmt.Sprintf("meshes[%d].context", i), m.Context, "another cluster to act on", "")
	}
	var errs FieldErrors
	for _, r := range out {
		fix := fmt.Sprintf("pass %s if you trust whoever wrote %s", TrustFlag, dir)
		if r.flag != "" {
			fix = fmt.Sprintf("give it on the command line, %s, or %s", r.flag, fix)
		}
		errs = append(errs, asFieldError(fieldError(r.path, "%q: %s; a study resumed from a results directory cannot choose it (the directory may come from anyone, and meshbench acts with your privileges); %s",
			r.value, r.what, fix)))
	}
	return errs
}
