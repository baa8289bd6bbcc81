package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/meshbench/meshbench/internal/platform"
	platformlab "github.com/meshbench/meshbench/internal/platform/lab"
	"github.com/meshbench/meshbench/internal/study"
)

// sharedHostEnv turns --shared-host on by default, for test suites and
// development hosts where several labs run at once.
const sharedHostEnv = "MESHBENCH_SHARED_HOST"

func newDoctorCmd(s Streams, g *globals) *cobra.Command {
	var f runFlags
	cmd := &cobra.Command{
		Use:   "doctor [FILE]",
		Short: "Check that this host can run a study, creating nothing; 'meshbench run' runs the same checks first",
		Long: `Check what a study (a file, --study, or the default quick) needs of its
platform before anything is created. On the lab: root, network namespaces,
iptables with the socket match, TPROXY, REDIRECT and the owner match, the
cgroup controllers, the CPUs the study's nodes pin, no other lab's processes
on those CPUs (--shared-host accepts them), Envoy at the version the data
planes are written for (when the study installs a mesh), each Envoy
release the meshes name (proxy_version), and free disk where the results
go. On Kubernetes (each cluster a mesh's context names):
the kubeconfig and context, the API server, the permissions a run needs
(SelfSubjectAccessReview), a node for each role with its labels and taints,
a metrics source (the metrics API or the study's Prometheus), the Gateway
API CRDs for waypoints, the meshes the cluster can host (Cilium), and the
chart sources; it only reads the cluster. Each failed check is one line
with its fix; -o json prints every finding as JSON.`,
		Example: `  meshbench doctor
  meshbench doctor my-study.yaml
  meshbench doctor -o json
  meshbench doctor --study livewyer-bookinfo --platform kubernetes --image ghcr.io/you/meshbench:v0.1.0 --context perf
  MESHBENCH_ENVOY=/opt/envoy/bin/envoy meshbench doctor --study solo-tiered`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				f.file = args[0]
			}
			if err := checkOutput(f.output, outText, outJSON); err != nil {
				return err
			}
			st, _, _, err := loadStudy(f)
			if err != nil {
				return err
			}
			dir := f.out
			if dir == "" {
				dir = "results"
			}
			fs := preflight(cmd.Context(), st, dir, f)
			failed := platform.Problems(fs) != nil
			if f.output == outJSON {
				if fs == nil {
					fs = []platform.Finding{}
				}
				if err := writeJSON(s, struct {
					OK       bool               `json:"ok"`
					Platform string             `json:"platform"`
					Findings []platform.Finding `json:"findings"`
				}{!failed, st.Platform.Type, fs}); err != nil {
					return err
				}
			}
			for _, x := range fs {
				if f.output == outJSON {
					break
				}
				mark := "ok  "
				switch {
				case !x.OK && x.Advisory:
					mark = "warn"
				case !x.OK:
					mark = "FAIL"
				}
				fmt.Fprintf(s.Out, "%s %s\n", mark, x.Line())
			}
			if failed {
				return errors.New("some checks failed: fix them as each line says")
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.preset, "study", "", "check for a built-in study; default "+study.DefaultPreset)
	fl.StringVar(&f.out, "out", "", "the results directory a run would write into, for the free-disk check (default results)")
	fl.StringVarP(&f.output, "output", "o", outText, "output format: text or json")
	addPlatformFlags(cmd, &f)
	return cmd
}

// addPlatformFlags adds the flags doctor shares with run: the platform
// override and --shared-host.
func addPlatformFlags(cmd *cobra.Command, f *runFlags) {
	fl := cmd.Flags()
	shared, _ := strconv.ParseBool(os.Getenv(sharedHostEnv))
	fl.BoolVar(&f.sharedHost, "shared-host", shared, "measure even while another lab's processes run on the study's CPUs, or the hypervisor takes a share of them, without waiting for the host to quiet (default $"+sharedHostEnv+")")
	fl.StringVar(&f.platform.Type, "platform", "", "run on this platform instead of the study's: lab or kubernetes")
	fl.StringVar(&f.platform.Kubeconfig, "kubeconfig", "", "kubeconfig file for kubernetes (default $KUBECONFIG or ~/.kube/config)")
	fl.StringVar(&f.platform.Context, "context", "", "kubeconfig context for kubernetes (default the current one)")
	fl.StringVar(&f.platform.Image, "image", "", "meshbench's image for kubernetes, such as ghcr.io/you/meshbench:v0.1.0")
	addAllowChartRulesFlag(fl, &f.allowChartRules)
}

// preflight runs the checks of the study's platform; each platform
// produces its own findings, and the disk check applies to all.
func preflight(ctx context.Context, st *study.Study, resultsDir string, f runFlags) []platform.Finding {
	n := platform.Needs{Nodes: st.Platform.Nodes, ResultsDir: resultsDir, SharedHost: f.sharedHost}
	for _, m := range st.Meshes {
		n.Profiles = append(n.Profiles, m.Profile)
		if m.ProxyVersion != "" && !slices.Contains(n.ProxyVersions, m.ProxyVersion) {
			n.ProxyVersions = append(n.ProxyVersions, m.ProxyVersion)
		}
	}
	if st.Platform.Type == study.PlatformLab {
		return platformlab.Doctor(ctx, n, "")
	}
	fs := kubernetesFindings(ctx, st.Platform, f.allowChartRules)
	return append(fs, platform.DiskFinding(resultsDir, platform.MinFreeDisk))
}

// allowChartRulesFlag accepts the wide rules of the charts' roles it
// names (the Kubernetes platform's refusal names it too).
const allowChartRulesFlag = "allow-chart-rules"

// addAllowChartRulesFlag adds the flag that accepts wide chart rules.
func addAllowChartRulesFlag(fl *pflag.FlagSet, allow *[]string) {
	fl.StringSliceVar(allow, allowChartRulesFlag, nil,
		"on kubernetes, accept the wide rules (wildcards beyond a mesh's own API, non-resource URLs) of the charts' roles named, ClusterRole/NAME or Role/NAMESPACE/NAME; refused otherwise")
}
