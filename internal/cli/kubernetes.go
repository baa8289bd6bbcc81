//go:build !labonly

package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/spf13/cobra"
	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/meshbench/meshbench/internal/infra"
	"github.com/meshbench/meshbench/internal/platform"
	"github.com/meshbench/meshbench/internal/platform/kube"
	"github.com/meshbench/meshbench/internal/study"
)

const labOnly = false

const (
	labOnlyNote = ""
	labOnlyFix  = ""
)

func buildPlatforms() []string { return []string{infra.Lab, infra.Kubernetes} }

// openKubernetes opens the Kubernetes platform a study's platform section
// describes.
func openKubernetes(p study.Platform, log *slog.Logger) (platform.Platform, error) {
	o := kubeOptions(p.Kubernetes)
	o.Logger, o.Ingress, o.Meshes = log, p.Ingress, p.Meshes
	return kube.New(o)
}

// kubernetesFindings is the Kubernetes platform's preflight for a study,
// accepting the wide chart rules allow names.
func kubernetesFindings(ctx context.Context, p study.Platform, allow []string) []platform.Finding {
	o := kubeOptions(p.Kubernetes)
	o.Ingress, o.Meshes, o.AllowChartRules = p.Ingress, p.Meshes, allow
	return kube.Doctor(ctx, o, infra.ClusterSpec{Nodes: p.Nodes})
}

// kubeOptions maps a study's Kubernetes section onto the Kubernetes
// platform's options; a nil section gives kube's defaults (the kubeconfig
// from $KUBECONFIG or ~/.kube/config, as kubectl finds it).
func kubeOptions(k *study.Kubernetes) kube.Options {
	if k == nil {
		return kube.Options{}
	}
	return kube.Options{
		Kubeconfig: k.Kubeconfig, Context: k.Context, Image: k.Image,
		ImagePullPolicy: k.ImagePullPolicy, Prometheus: k.Prometheus,
		Charts: k.Charts, Timeout: k.Timeout.D(), GatewayImage: k.GatewayImage, NamespacePrefix: k.NamespacePrefix,
		SampleInterval: k.SampleInterval.D(),
	}
}

func newKubernetesCmd(s Streams, g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "kubernetes",
		Short: "Manage what meshbench runs made in a Kubernetes cluster",
	}
	cmd.AddCommand(newKubernetesDownCmd(s, g), newKubernetesRBACCmd(s))
	return cmd
}

func newKubernetesRBACCmd(s Streams) *cobra.Command {
	var (
		user, group, serviceAccount, kubeVersion string
		f                                        runFlags
	)
	cmd := &cobra.Command{
		Use:   "rbac [FILE] --user NAME | --group NAME | --service-account NAMESPACE/NAME",
		Short: "Print the role a run needs, and its binding, for kubectl apply",
		Long: `Print what binds exactly the permissions a run of a study uses (what
'meshbench doctor' checks) to the user, group or service account that
runs meshbench. There are two modes, and the output says which.

A study that installs a mesh from its charts needs a ClusterRole that is
cluster-admin in effect: the API server lets a user create a role only if
the user holds every permission the role grants, so it holds every rule of
the charts' ClusterRoles and Roles (cluster-wide), bind only on the roles
of the cluster the charts bind, by name, and meshbench's own rules (CRDs,
webhooks, DaemonSets, Helm's Secrets anywhere). To read them it renders
the charts of the study's meshes (a file, or --study NAME) with the values
a run installs them with, which may download them; with no study, the
charts of every mesh meshbench installs (Istio's profiles with the ingress
gateway, and Linkerd's, from your Helm repository "linkerd"), a role any
study can run under. A chart role with a wide rule (non-resource URLs,
every API group, wildcards that write or reach Kubernetes' own groups,
every verb on anything but a status) is refused unless
--allow-chart-rules names it. Other chart versions or values may need
other rules: print the role again when they change (the role's
meshbench.io/charts annotation names the charts).

A study that installs no charts (baseline, cilium, meshes with
use_existing) gets a namespaced role: small cluster-wide rules, a
ClusterRole meshbench binds to itself in each namespace it makes, read-only
Roles in kube-system and the mesh's namespace, and a
ValidatingAdmissionPolicy (Kubernetes 1.30 or later) that lets it bind that
role nowhere else and make no privileged pod. Apply all of it.`,
		Example: `  meshbench kubernetes rbac --user perf | kubectl apply -f -
  meshbench kubernetes rbac --study solo-tiered --group perf-team | kubectl apply -f -
  meshbench kubernetes rbac my-study.yaml --service-account perf/meshbench
  meshbench kubernetes rbac my-study.yaml --user perf --allow-chart-rules ClusterRole/vendor-admin`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var subject rbacv1.Subject
			given := 0
			for _, v := range []string{user, group, serviceAccount} {
				if v != "" {
					given++
				}
			}
			switch {
			case given != 1:
				return errors.New("give exactly one of --user, --group and --service-account")
			case user != "":
				subject = rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}
			case group != "":
				subject = rbacv1.Subject{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: group}
			default:
				ns, name, ok := strings.Cut(serviceAccount, "/")
				if !ok || ns == "" || name == "" {
					return fmt.Errorf("--service-account %q: want NAMESPACE/NAME", serviceAccount)
				}
				subject = rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: name}
			}
			o := kube.Options{Meshes: kube.ChartMeshes(), Ingress: true}
			fix := ", or name the study you will run (FILE or --study NAME): its meshes' charts alone are read"
			if len(args) == 1 || f.preset != "" {
				if len(args) == 1 {
					f.file = args[0]
				}
				// The image is no part of the role, but a study on
				// Kubernetes must name one.
				f.platform = study.PlatformOverride{Type: study.PlatformKubernetes, Image: "(not used by rbac)"}
				st, _, _, err := loadStudy(f)
				if err != nil {
					return err
				}
				o = kubeOptions(st.Platform.Kubernetes)
				o.Meshes, o.Ingress = st.Platform.Meshes, st.Platform.Ingress
				fix = ""
			}
			o.AllowChartRules = f.allowChartRules
			role, err := kube.RBAC(cmd.Context(), o, kubeVersion)
			if err != nil {
				return fmt.Errorf("kubernetes rbac: reading the RBAC the meshes' charts install: %w%s", err, fix)
			}
			return kube.WriteRBAC(s.Out, role, subject)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&user, "user", "", "bind the role to this user")
	fl.StringVar(&group, "group", "", "bind the role to this group")
	fl.StringVar(&serviceAccount, "service-account", "", "bind the role to this service account, NAMESPACE/NAME")
	fl.StringVar(&f.preset, "study", "", "the role for a built-in study's meshes (see 'meshbench studies'); default every mesh with charts")
	fl.StringVar(&kubeVersion, "kube-version", kube.DefaultKubeVersion, "the cluster's Kubernetes version, which charts may render for")
	addAllowChartRulesFlag(fl, &f.allowChartRules)
	return cmd
}

func newKubernetesDownCmd(s Streams, g *globals) *cobra.Command {
	var (
		o           kube.Options
		all, dryRun bool
	)
	cmd := &cobra.Command{
		Use:   "down RUN | --all",
		Short: "Remove exactly what a meshbench run made in the cluster, even after a crash",
		Long: `Every object a run makes carries its run id (the label meshbench.io/run),
which the run logs and which a later run's refusal names. 'down RUN' removes
what that run made: its namespaces and everything in them, its Helm
releases with the CRDs they kept, and its mesh objects; --all removes what
every run made. Nothing without meshbench's labels is touched, and a run
that still holds the cluster's lease is refused. --dry-run lists instead.`,
		Example: `  meshbench kubernetes down --all --dry-run
  meshbench kubernetes down 20261127-031500-a1b2c3`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			run := ""
			switch {
			case len(args) == 1 && all:
				return errors.New("give a run id or --all, not both")
			case len(args) == 1:
				run = args[0]
			case !all:
				return errors.New("give the run id to remove, or --all for every run (see them with: meshbench kubernetes down --all --dry-run)")
			}
			o.Logger = g.logger(s)
			items, err := kube.Inventory(cmd.Context(), o, run)
			if err != nil {
				return err
			}
			verb := "removing"
			if dryRun {
				verb = "would remove"
			}
			for _, it := range items {
				fmt.Fprintf(s.Out, "%s %s (run %s)\n", verb, it.What, it.Run)
			}
			if len(items) == 0 {
				fmt.Fprintln(s.Out, "nothing of meshbench's to remove")
			}
			if dryRun {
				return nil
			}
			return kube.Teardown(cmd.Context(), o, run)
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&all, "all", false, "remove what every meshbench run made")
	fl.BoolVar(&dryRun, "dry-run", false, "list what would be removed, and remove nothing")
	fl.StringVar(&o.Kubeconfig, "kubeconfig", "", "kubeconfig file (default $KUBECONFIG or ~/.kube/config)")
	fl.StringVar(&o.Context, "context", "", "kubeconfig context (default the current one)")
	fl.DurationVar(&o.Timeout, "timeout", 0, "bound on each wait for objects to go (default 5m)")
	return cmd
}
