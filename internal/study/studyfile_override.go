package study

import (
	"errors"
	"fmt"
)

// PlatformOverride is what the command line may set over a study file's
// platform section; each non-empty field replaces the file's.
type PlatformOverride struct {
	Type       string
	Kubeconfig string
	Context    string
	Image      string
}

// override applies o to a parsed platform section before validation, so
// that a study written for the lab can run on a cluster (and the other way
// round) without editing the file; minAppCPUs shapes the lab's default
// nodes, as in DefaultLabNodes.
func (p *Platform) override(o PlatformOverride, minAppCPUs int) error {
	if o == (PlatformOverride{}) {
		return nil
	}
	if o.Type != "" {
		p.Type = o.Type
	}
	kubeSet := o.Kubeconfig != "" || o.Context != "" || o.Image != ""
	switch p.Type {
	case PlatformLab:
		if kubeSet {
			return errors.New("--kubeconfig, --context and --image are for --platform kubernetes; this study runs on the lab")
		}
		// The command line chose the lab: a cluster section no longer applies.
		p.Kubernetes = nil
		if len(p.Nodes) == 0 {
			p.Nodes = DefaultLabNodes(minAppCPUs)
		}
	case PlatformKubernetes:
		if p.Kubernetes == nil {
			p.Kubernetes = &Kubernetes{}
		}
		k := p.Kubernetes
		for _, f := range []struct {
			dst *string
			v   string
		}{
			{&k.Kubeconfig, o.Kubeconfig}, {&k.Context, o.Context}, {&k.Image, o.Image},
		} {
			if f.v != "" {
				*f.dst = f.v
			}
		}
	default:
		return fmt.Errorf("--platform %q: want %s or %s", p.Type, PlatformLab, PlatformKubernetes)
	}
	return nil
}
