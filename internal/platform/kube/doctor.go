package kube

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	authv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/component-helpers/auth/rbac/validation"

	"helm.sh/helm/v3/pkg/registry"
	"helm.sh/helm/v3/pkg/repo"

	"github.com/meshbench/meshbench/internal/infra"
	"github.com/meshbench/meshbench/internal/mesh"
	"github.com/meshbench/meshbench/internal/platform"
)

// doctorTimeout bounds each network check (a chart repository, the API).
const doctorTimeout = 10 * time.Second

// Doctor checks, before anything is created, that a study can run on the
// cluster opts names: the kubeconfig and its context, the API server, the
// permissions the run needs, a node for each of the study's roles, a
// metrics source, the Gateway API for waypoints, the meshes the cluster
// can host, and the chart sources. It reads the cluster and never writes
// to it. Every failing finding says how to fix it. A mesh naming another
// context is checked on that cluster too.
func Doctor(ctx context.Context, opts Options, cluster infra.ClusterSpec) []platform.Finding {
	contexts := []string{opts.Context}
	byContext := map[string][]mesh.MeshSpec{opts.Context: nil}
	for _, m := range opts.Meshes {
		c := meshContext(opts, m)
		if _, ok := byContext[c]; !ok {
			contexts = append(contexts, c)
		}
		byContext[c] = append(byContext[c], m)
	}
	var out []platform.Finding
	for _, c := range contexts {
		o := opts
		o.Context, o.Meshes = c, byContext[c]
		fs := doctorCluster(ctx, o, cluster)
		if len(contexts) > 1 {
			for i := range fs {
				fs[i].Check = "context " + c + ": " + fs[i].Check
			}
		}
		out = append(out, fs...)
	}
	return out
}

func doctorCluster(ctx context.Context, opts Options, cluster infra.ClusterSpec) []platform.Finding {
	if opts.Image == "" {
		opts.Image = "(doctor)" // the image is the study's to check, not the cluster's
	}
	p, err := newPlatform(opts)
	if errors.Is(err, errNoKube) {
		return []platform.Finding{{Check: "kubeconfig", Detail: err.Error()}}
	}
	if err != nil {
		return []platform.Finding{{Check: "kubeconfig", Detail: err.Error(),
			Fix: "give --kubeconfig FILE (or set $KUBECONFIG) and --context NAME of a context in it"}}
	}
	out := []platform.Finding{{Check: "kubeconfig", OK: true, Detail: "context " + contextName(p)}}
	vctx, cancel := context.WithTimeout(ctx, doctorTimeout)
	defer cancel()
	v, err := serverVersion(vctx, p)
	if err != nil {
		return append(out, platform.Finding{Check: "api-server", Detail: err.Error(),
			Fix: "check that the cluster is up and reachable from here, and the kubeconfig's credentials (kubectl --context " + contextName(p) + " version)"})
	}
	out = append(out, platform.Finding{Check: "api-server", OK: true, Detail: "Kubernetes " + v})
	out = append(out, p.permissionFindings(ctx, v)...)
	out = append(out, p.nodeFindings(ctx, cluster)...)
	out = append(out, p.metricsFinding(ctx))
	if f, ok := p.gatewayAPIFinding(ctx); ok {
		out = append(out, f)
	}
	out = append(out, p.profileFindings(ctx)...)
	out = append(out, p.chartFindings(ctx)...)
	return out
}

func contextName(p *kubePlatform) string {
	raw, err := p.c.raw.RawConfig()
	if err != nil {
		return "(unknown)"
	}
	if p.opts.Context != "" {
		return p.opts.Context
	}
	return raw.CurrentContext
}

// serverVersion asks the API server its version under ctx.
func serverVersion(ctx context.Context, p *kubePlatform) (string, error) {
	raw, err := p.c.kube.Discovery().RESTClient().Get().AbsPath("/version").DoRaw(ctx)
	if err != nil {
		return "", err
	}
	var v struct {
		GitVersion string `json:"gitVersion"`
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		return "", err
	}
	return v.GitVersion, nil
}

// rbacCommand binds the role a run of a study needs.
const rbacCommand = "meshbench kubernetes rbac --user USER [FILE | --study NAME] | kubectl apply -f -"

// permissionFindings asks the API server whether the kubeconfig's user
// may do what a run of the platform's meshes does, the role RBAC gives,
// its charts rendered for the cluster's Kubernetes version.
func (p *kubePlatform) permissionFindings(ctx context.Context, kubeVersion string) []platform.Finding {
	role, err := p.role(ctx, kubeVersion)
	if err != nil {
		return []platform.Finding{{Check: "permissions", Detail: "cannot read the RBAC the study's charts install: " + err.Error(),
			Fix: "make the charts readable from here (the chart findings say how), then bind the role: " + rbacCommand}}
	}
	var denied []string
	asked := needed(role.Rules)
	for _, ns := range slices.Sorted(maps.Keys(role.Reads)) {
		asked = append(asked, neededIn(role.Reads[ns], ns)...)
	}
	if role.Namespaced {
		denied = append(denied, p.namespacedParts(ctx, role)...)
	}
	for _, spec := range asked {
		r, err := p.c.kube.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx,
			&authv1.SelfSubjectAccessReview{Spec: spec}, metav1.CreateOptions{})
		if err != nil {
			return []platform.Finding{{Check: "permissions", Detail: "SelfSubjectAccessReview: " + err.Error(),
				Fix: "the user needs rights to ask what it may do (system:basic-user), and the role a run needs: " + rbacCommand}}
		}
		if !r.Status.Allowed {
			denied = append(denied, what(spec))
		}
	}
	if len(denied) > 0 {
		return []platform.Finding{{Check: "permissions", Detail: "denied: " + strings.Join(denied, ", "),
			Fix: "bind the role a run needs: " + rbacCommand}}
	}
	return []platform.Finding{{Check: "permissions", OK: true, Detail: fmt.Sprintf("%d actions a run takes are allowed", len(asked))}}
}

// namespacedParts names what of the namespaced role, beyond the rules
// access reviews ask about, the cluster lacks: the namespace role, with
// every rule a run binds itself to, and the admission policy that bounds
// it, without which the role could bind itself anywhere.
func (p *kubePlatform) namespacedParts(ctx context.Context, role Role) []string {
	var missing []string
	cr, err := p.c.kube.RbacV1().ClusterRoles().Get(ctx, namespaceRoleName, metav1.GetOptions{})
	if err != nil {
		missing = append(missing, "ClusterRole "+namespaceRoleName+" ("+err.Error()+")")
	} else if ok, lacks := validation.Covers(cr.Rules, role.NamespaceRules); !ok {
		missing = append(missing, fmt.Sprintf("ClusterRole %s lacks %v", namespaceRoleName, lacks))
	}
	adm := p.c.kube.AdmissionregistrationV1()
	if _, err := adm.ValidatingAdmissionPolicies().Get(ctx, policyName, metav1.GetOptions{}); err != nil {
		missing = append(missing, "the admission policy "+policyName+" ("+err.Error()+")")
	}
	if _, err := adm.ValidatingAdmissionPolicyBindings().Get(ctx, policyName, metav1.GetOptions{}); err != nil {
		missing = append(missing, "the admission policy binding "+policyName+" ("+err.Error()+")")
	}
	return missing
}

// nodeFindings checks the study's roles against the nodes.
func (p *kubePlatform) nodeFindings(ctx context.Context, cluster infra.ClusterSpec) []platform.Finding {
	if len(cluster.Nodes) == 0 {
		return []platform.Finding{{Check: "nodes", Detail: "the study names no nodes", Fix: "give the study's platform.nodes at least an app and a load node"}}
	}
	list, err := p.c.kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return []platform.Finding{{Check: "nodes", Detail: err.Error(), Fix: "the user must be able to list nodes"}}
	}
	_, assigned, err := matchNodes(cluster.Nodes, list.Items)
	if err != nil {
		return []platform.Finding{{Check: "nodes", Detail: err.Error(),
			Fix: "label (and taint) nodes for the roles, e.g. kubectl label node NAME " + labelRole + "=app; kubectl taint node NAME meshbench.io/dedicated=load:NoSchedule"}}
	}
	var parts []string
	for _, role := range []infra.NodeRole{infra.NodeApp, infra.NodeLoad, infra.NodeMesh, infra.NodeIngress} {
		if n := assigned[role]; len(n) > 0 {
			parts = append(parts, string(role)+"="+strings.Join(n, ","))
		}
	}
	return []platform.Finding{{Check: "nodes", OK: true, Detail: strings.Join(parts, " ")}}
}

// metricsFinding checks the resource source the run will read.
func (p *kubePlatform) metricsFinding(ctx context.Context) platform.Finding {
	mctx, cancel := context.WithTimeout(ctx, doctorTimeout)
	defer cancel()
	if p.opts.Prometheus != "" {
		if _, err := promRaw(mctx, p.opts.Prometheus, "up[1m]", time.Now()); err != nil {
			return platform.Finding{Check: "metrics", Detail: err.Error(),
				Fix: "check platform.kubernetes.prometheus: a Prometheus that scrapes cAdvisor, reachable from here"}
		}
		return platform.Finding{Check: "metrics", OK: true, Detail: "Prometheus " + p.opts.Prometheus + " answers"}
	}
	if _, err := p.c.kube.Discovery().RESTClient().Get().AbsPath("/apis/metrics.k8s.io/v1beta1").DoRaw(mctx); err != nil {
		return platform.Finding{Check: "metrics", Detail: "no metrics API (metrics.k8s.io): " + err.Error(),
			Fix: "install metrics-server, or name a Prometheus that scrapes cAdvisor in platform.kubernetes.prometheus"}
	}
	return platform.Finding{Check: "metrics", OK: true, Detail: "the metrics API (metrics.k8s.io) answers"}
}

// gatewayAPIFinding checks the Gateway API CRDs when a mesh has waypoints.
func (p *kubePlatform) gatewayAPIFinding(ctx context.Context) (platform.Finding, bool) {
	for _, m := range p.opts.Meshes {
		pr, err := lookupProfile(m.Profile)
		if err != nil || !pr.Waypoint {
			continue
		}
		if err := p.requireGatewayAPI(ctx); err != nil {
			return platform.Finding{Check: "gateway-api", Detail: "profile " + m.Profile + " needs the Gateway API CRDs, which the cluster lacks",
				Fix: "kubectl apply --server-side -f https://github.com/kubernetes-sigs/gateway-api/releases/download/v1.2.1/standard-install.yaml"}, true
		}
		return platform.Finding{Check: "gateway-api", OK: true, Detail: "Gateway API CRDs installed, for the waypoints"}, true
	}
	return platform.Finding{}, false
}

// profileFindings checks that the cluster can host each mesh (Cilium).
func (p *kubePlatform) profileFindings(ctx context.Context) []platform.Finding {
	if err := p.checkProfiles(ctx); err != nil {
		return []platform.Finding{{Check: "meshes", Detail: err.Error(),
			Fix: "run those meshes on a cluster that runs them (a mesh's context), or drop them from the study"}}
	}
	var names []string
	for _, m := range p.opts.Meshes {
		names = append(names, m.Profile)
	}
	return []platform.Finding{{Check: "meshes", OK: true, Detail: "the cluster can host " + strings.Join(names, ", ")}}
}

// chartsFor lists the chart keys the study's meshes install.
func (p *kubePlatform) chartsFor() []string {
	seen := map[string]bool{}
	var keys []string
	add := func(ks ...string) {
		for _, k := range ks {
			if !seen[k] {
				seen[k] = true
				keys = append(keys, k)
			}
		}
	}
	for _, m := range p.opts.Meshes {
		pr, err := lookupProfile(m.Profile)
		if err != nil {
			continue
		}
		add(pr.ChartsFor(p.opts.Ingress)...)
	}
	return keys
}

// chartFindings checks that each chart the study installs can be found:
// a local path exists, a repository answers its index, a "repo/chart"
// names a repository the user added. OCI references are only parsed.
func (p *kubePlatform) chartFindings(ctx context.Context) []platform.Finding {
	var out []platform.Finding
	for _, key := range p.chartsFor() {
		src := p.charts[key]
		f := platform.Finding{Check: "chart " + key, OK: true}
		switch {
		case registry.IsOCI(src.Chart):
			f.Detail = src.Chart + " (an OCI reference; its registry is reached at install)"
		case src.Repo != "":
			if err := repoReachable(ctx, src.Repo); err != nil {
				f.OK, f.Detail = false, fmt.Sprintf("repository %s: %v", src.Repo, err)
				f.Fix = "check the network path to the repository, or name a local copy: platform.kubernetes.charts." + key + ".chart: /path/to/chart (helm pull --untar)"
			} else {
				f.Detail = fmt.Sprintf("%s %s from %s", src.Chart, src.Version, src.Repo)
			}
		case strings.HasPrefix(src.Chart, "/") || strings.HasPrefix(src.Chart, "."):
			if _, err := os.Stat(src.Chart); err != nil {
				f.OK, f.Detail, f.Fix = false, err.Error(), "fix platform.kubernetes.charts."+key+".chart: a chart directory or archive"
			} else {
				f.Detail = src.Chart
			}
		default:
			name, _, _ := strings.Cut(src.Chart, "/")
			rf, err := repo.LoadFile(p.helmSettings().RepositoryConfig)
			if err != nil || !rf.Has(name) {
				f.OK, f.Detail = false, fmt.Sprintf("%s: no Helm repository %q is added", src.Chart, name)
				f.Fix = fmt.Sprintf("helm repo add %s URL && helm repo update, or name the chart's repo or a local copy in platform.kubernetes.charts.%s", name, key)
			} else {
				f.Detail = fmt.Sprintf("%s %s from your Helm repository %s", src.Chart, src.Version, name)
			}
		}
		out = append(out, f)
	}
	return out
}

// repoReachable fetches a chart repository's index.
func repoReachable(ctx context.Context, url string) error {
	ctx, cancel := context.WithTimeout(ctx, doctorTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodHead, strings.TrimRight(url, "/")+"/index.yaml", nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode >= 400 {
		return fmt.Errorf("index.yaml: %s", resp.Status)
	}
	return nil
}
