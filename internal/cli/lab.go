package cli

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"

	"github.com/spf13/cobra"

	platlab "github.com/meshbench/meshbench/internal/platform/lab"
)

func newLabCmd(s Streams, g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "lab",
		Short: "Run a Kubernetes-like cluster on this host with network namespaces and cgroups",
		Long: `The lab emulates a cluster on one Linux host: nodes and pods are network
namespaces, Services are virtual IPs load-balanced by iptables as kube-proxy
does, and every container is a process in its own cgroup with its requests
and limits. It needs root. Everything it makes carries its name prefix, and
'lab down' removes it all, even after a crash.`,
	}
	cmd.AddCommand(newLabUpCmd(s, g), newLabStatusCmd(s), newLabExecCmd(s), newLabDownCmd(s, g), newLabSuperviseCmd(s, g))
	return cmd
}

func newLabUpCmd(s Streams, g *globals) *cobra.Command {
	var file string
	cmd := &cobra.Command{
		Use:   "up -f CLUSTER.yaml",
		Short: "Bring a lab up, deploy its workload, and leave it running",
		Example: `  meshbench lab up -f cluster.yaml
  meshbench lab status
  meshbench lab exec ns-1/load -- sh -c 'curl -s http://$TIER_1_APP_A_SERVICE_HOST:$TIER_1_APP_A_SERVICE_PORT/'
  meshbench lab down`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := existing("--file", file); err != nil {
				return err
			}
			return platlab.Start(cmd.Context(), file, platlab.Options{Logger: g.logger(s)})
		},
	}
	cmd.Flags().StringVarP(&file, "file", "f", "", "cluster file: nodes and an optional workload (required)")
	_ = cmd.MarkFlagRequired("file")
	return cmd
}

func newLabStatusCmd(s Streams) *cobra.Command {
	var name string
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show the lab's nodes, Services and pods with their CPU and memory",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return platlab.Status(cmd.Context(), name, s.Out)
		},
	}
	cmd.Flags().StringVar(&name, "name", platlab.DefaultName, "lab name")
	return cmd
}

func newLabExecCmd(s Streams) *cobra.Command {
	var name string
	cmd := &cobra.Command{
		Use:   "exec POD|node/NODE -- COMMAND [ARG...]",
		Short: "Run a command inside a pod's or node's network namespace, as kubectl exec",
		Long: `Run a command inside a pod's (namespace/name, or a name unique in the lab) or
a node's network namespace. The Services of the pod's namespace are in the
environment as NAME_SERVICE_HOST and NAME_SERVICE_PORT.`,
		Args: cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.ArgsLenAtDash() != 1 {
				return errors.New("give the command after --: meshbench lab exec POD -- COMMAND")
			}
			return platlab.Exec(cmd.Context(), name, args[0], args[1:], s.In, s.Out, s.ErrOut)
		},
	}
	cmd.Flags().StringVar(&name, "name", platlab.DefaultName, "lab name")
	return cmd
}

func newLabDownCmd(s Streams, g *globals) *cobra.Command {
	var (
		name, prefix string
		dryRun       bool
	)
	cmd := &cobra.Command{
		Use:   "down",
		Short: "Remove every process, namespace, cgroup and rule of a lab, even after a crash",
		Long: `Remove a lab: --name (its state names everything it made), or --prefix for
leftovers whose state is gone. With neither, remove the lab 'lab up' made
(named mb), every lab whose owner is gone, such as a 'meshbench run'
killed outright, and what a control-plane study killed outright left (its
cgroups and its local control plane's directory), and list them; a lab or
study whose owner still runs (another run's) is left alone. That is what 'kubernetes down --all' is to a
cluster, so lab down takes no --all. --dry-run lists what would be removed
(processes, network namespaces with their veths and iptables chains,
cgroups, state files) and removes nothing.`,
		Example: `  meshbench lab down --dry-run
  meshbench lab down --name mb`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if name != "" || prefix != "" {
				if name == "" {
					name = platlab.DefaultName
				}
				if err := platlab.CheckName(name); err != nil {
					return fmt.Errorf("--name: %w", err)
				}
				if dryRun {
					r, err := platlab.Inventory(cmd.Context(), name, prefix)
					if err != nil && len(r) == 0 {
						return err // refused, or nothing found: say nothing would be removed only when that is known
					}
					printRemoval(s, "lab "+name, r)
					return err
				}
				return platlab.Teardown(cmd.Context(), name, prefix, g.logger(s))
			}
			if dryRun {
				all, err := platlab.InventoryAll(cmd.Context())
				names := slices.Sorted(maps.Keys(all))
				for _, n := range names {
					printRemoval(s, n, all[n])
				}
				if len(names) == 0 && err == nil {
					fmt.Fprintln(s.Out, "no lab would be removed: every lab's owner is running (see one with --name)")
				}
				return err
			}
			return labDownAll(cmd.Context(), s, g)
		},
	}
	cmd.Flags().StringVar(&name, "name", "", "lab name (default: the lab 'lab up' made, and every lab whose owner is gone)")
	cmd.Flags().StringVar(&prefix, "prefix", "", "remove leftovers with this name prefix even when the lab's state is gone")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "list what would be removed, and remove nothing")
	return cmd
}

// printRemoval lists what lab down would remove of one lab ("lab NAME")
// or killed control-plane study, a line each.
func printRemoval(s Streams, what string, lines []string) {
	if len(lines) == 0 {
		fmt.Fprintf(s.Out, "%s: nothing to remove\n", what)
		return
	}
	for _, l := range lines {
		fmt.Fprintf(s.Out, "would remove %s: %s\n", what, l)
	}
}

// labDownAll removes the `lab up` lab and every lab whose owner is gone,
// listing each.
func labDownAll(ctx context.Context, s Streams, g *globals) error {
	removed, err := platlab.TeardownAll(ctx, g.logger(s))
	for _, line := range removed {
		fmt.Fprintf(s.Out, "removed %s\n", line)
	}
	if len(removed) == 0 && err == nil {
		fmt.Fprintln(s.Out, "no lab to remove: every lab's owner is running (remove one with --name)")
	}
	return err
}

// newLabSuperviseCmd is the detached process `lab up` starts: it owns the
// lab's pods until SIGTERM.
func newLabSuperviseCmd(s Streams, g *globals) *cobra.Command {
	var (
		file    string
		o       platlab.Options
		readyFD int
	)
	cmd := &cobra.Command{
		Use:    "supervise -f CLUSTER.yaml",
		Short:  "Run a lab in the foreground until interrupted (lab up runs this detached)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f, err := platlab.LoadClusterFile(file)
			if err != nil {
				return err
			}
			ready := func(error) {}
			if readyFD > 0 {
				ready = platlab.ReadyWriter(os.NewFile(uintptr(readyFD), "ready"))
			}
			o.Logger = g.logger(s)
			return platlab.Supervise(cmd.Context(), f, o, ready)
		},
	}
	cmd.Flags().StringVarP(&file, "file", "f", "", "cluster file (required)")
	cmd.Flags().StringVar(&o.Name, "name", "", "lab name (default: the file's, else mb)")
	cmd.Flags().StringVar(&o.Prefix, "prefix", "", "name prefix (default: the file's, else mb)")
	cmd.Flags().IntVar(&readyFD, "ready-fd", 0, "file descriptor to report readiness on")
	_ = cmd.MarkFlagRequired("file")
	return cmd
}
