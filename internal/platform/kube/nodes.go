package kube

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/meshbench/meshbench/internal/infra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// labelRole is the node label a study's node spec selects by default:
// meshbench.io/role=app selects an app node.
const labelRole = "meshbench.io/role"

// placement is where one role's pods go: a node selector matching every
// node of the role, and tolerations for the role's taints.
type placement struct {
	NodeSelector map[string]string
	Tolerations  []corev1.Toleration
}

// roleSelector is the label set a node spec selects its node by.
func roleSelector(n infra.NodeSpec) map[string]string {
	if len(n.Labels) > 0 {
		return n.Labels
	}
	return map[string]string{labelRole: string(n.Role)}
}

// parseTaint reads a node spec's taint (infra.ParseTaint).
func parseTaint(s string) (corev1.Taint, error) {
	key, value, effect, err := infra.ParseTaint(s)
	if err != nil {
		return corev1.Taint{}, err
	}
	return corev1.Taint{Key: key, Value: value, Effect: corev1.TaintEffect(effect)}, nil
}

func toleration(t corev1.Taint) corev1.Toleration {
	return corev1.Toleration{Key: t.Key, Operator: corev1.TolerationOpEqual, Value: t.Value, Effect: t.Effect}
}

// matchNodes assigns a distinct Ready, schedulable node to every node spec,
// and derives each role's placement. The error lists every spec left
// without a node and how to fix it.
func matchNodes(specs []infra.NodeSpec, nodes []corev1.Node) (map[infra.NodeRole]placement, map[infra.NodeRole][]string, error) {
	taken := map[string]bool{}
	assigned := map[infra.NodeRole][]string{}
	places := map[infra.NodeRole]placement{}
	var missing []string
	sort.Slice(nodes, func(i, j int) bool { return nodes[i].Name < nodes[j].Name })
	for i, n := range specs {
		if n.Role == infra.NodeClient {
			// Outside the cluster: the ingress path's client is the
			// generator pod itself, which a cluster cannot place off it.
			continue
		}
		sel := roleSelector(n)
		var taints []corev1.Taint
		for _, s := range n.Taints {
			t, err := parseTaint(s)
			if err != nil {
				return nil, nil, fmt.Errorf("nodes[%d] (%s): %w", i, n.Role, err)
			}
			taints = append(taints, t)
		}
		found := ""
		for _, node := range nodes {
			if taken[node.Name] || !usable(node) || !labels.SelectorFromSet(sel).Matches(labels.Set(node.Labels)) || !hasTaints(node, taints) {
				continue
			}
			found = node.Name
			break
		}
		if found == "" {
			missing = append(missing, fmt.Sprintf("nodes[%d] role %s: no free Ready node has labels %s%s",
				i, n.Role, labels.SelectorFromSet(sel), taintText(n.Taints)))
			continue
		}
		taken[found] = true
		assigned[n.Role] = append(assigned[n.Role], found)
		places[n.Role] = mergePlacement(places[n.Role], assigned[n.Role], sel, taints)
	}
	if len(missing) > 0 {
		return nil, nil, fmt.Errorf("cluster lacks nodes for the study's roles:\n  %s\nlabel (and taint) nodes to match, e.g. kubectl label node NAME %s=app, or change the study's nodes",
			strings.Join(missing, "\n  "), labelRole)
	}
	return places, assigned, nil
}

// mergePlacement narrows a role's selector to the labels all its specs
// share and adds tolerations for each spec's taints.
func mergePlacement(p placement, assigned []string, sel map[string]string, taints []corev1.Taint) placement {
	if len(assigned) == 1 {
		p.NodeSelector = map[string]string{}
		for k, v := range sel {
			p.NodeSelector[k] = v
		}
	} else {
		for k, v := range p.NodeSelector {
			if sel[k] != v {
				delete(p.NodeSelector, k)
			}
		}
	}
	for _, t := range taints {
		tol := toleration(t)
		dup := false
		for _, have := range p.Tolerations {
			dup = dup || have == tol
		}
		if !dup {
			p.Tolerations = append(p.Tolerations, tol)
		}
	}
	return p
}

func usable(n corev1.Node) bool {
	if n.Spec.Unschedulable {
		return false
	}
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func hasTaints(n corev1.Node, want []corev1.Taint) bool {
	for _, w := range want {
		ok := false
		for _, t := range n.Spec.Taints {
			ok = ok || (t.Key == w.Key && t.Value == w.Value && t.Effect == w.Effect)
		}
		if !ok {
			return false
		}
	}
	return true
}

func taintText(taints []string) string {
	if len(taints) == 0 {
		return ""
	}
	return " and taints " + strings.Join(taints, ",")
}

// Up checks that the cluster is reachable and has a node for every node
// spec of the study, and records where each role's pods go.
func (p *kubePlatform) Up(ctx context.Context, spec infra.ClusterSpec) error {
	if len(spec.Nodes) == 0 {
		return fmt.Errorf("kubernetes: the study names no nodes: give at least one app and one load node")
	}
	list, err := p.c.kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("kubernetes: list nodes: %w", err)
	}
	places, assigned, err := matchNodes(spec.Nodes, list.Items)
	if err != nil {
		return fmt.Errorf("kubernetes: %w", err)
	}
	for _, role := range []infra.NodeRole{infra.NodeApp, infra.NodeLoad} {
		if _, ok := places[role]; !ok {
			return fmt.Errorf("kubernetes: the study has no %s node: add a node with role %q", role, role)
		}
	}
	if err := p.checkProfiles(ctx); err != nil {
		return fmt.Errorf("kubernetes: %w", err)
	}
	if err := p.refuseForeignMeshes(ctx); err != nil {
		return fmt.Errorf("kubernetes: %w", err)
	}
	// Down releases the lease, after a failed Up too.
	if err := p.acquire(ctx, p.holder()); err != nil {
		return fmt.Errorf("kubernetes: %w", err)
	}
	if err := p.refuseLeftovers(ctx); err != nil {
		return fmt.Errorf("kubernetes: %w", err)
	}
	if p.clusterDomain, err = p.readClusterDomain(ctx); err != nil {
		return fmt.Errorf("kubernetes: the cluster's DNS domain: %w", err)
	}
	p.places, p.nodes = places, assigned
	p.log.Info("cluster nodes match the study", "app", assigned[infra.NodeApp], "load", assigned[infra.NodeLoad], "mesh", assigned[infra.NodeMesh])
	return nil
}

// place returns a role's placement, or none when the study has no node of
// that role (mesh components then go anywhere).
func (p *kubePlatform) place(role infra.NodeRole) placement {
	return p.places[role]
}

// allTolerations tolerates every role's taints, for node agents such as
// ztunnel that must run on every node.
func (p *kubePlatform) allTolerations() []corev1.Toleration {
	var out []corev1.Toleration
	seen := map[corev1.Toleration]bool{}
	for _, role := range []infra.NodeRole{infra.NodeApp, infra.NodeLoad, infra.NodeMesh, infra.NodeIngress} {
		for _, t := range p.places[role].Tolerations {
			if !seen[t] {
				seen[t] = true
				out = append(out, t)
			}
		}
	}
	return out
}
