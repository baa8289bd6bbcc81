package cluster

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

// Status prints a lab's nodes, Services and pods, with each container's
// CPU (averaged over a short sample) and memory working set.
func Status(ctx context.Context, stateDir string, w io.Writer) error {
	st, err := readState(stateDir)
	if err != nil {
		return fmt.Errorf("no lab in %s: %w", stateDir, err)
	}
	cpu, mem := sampleState(ctx, st, 500*time.Millisecond)
	owner := fmt.Sprintf("running (pid %d)", st.Owner)
	if !st.ownerAlive() {
		owner = fmt.Sprintf("owner pid %d is gone: pods are unsupervised; run meshbench lab down --name %s", st.Owner, st.Name)
	}
	fmt.Fprintf(w, "lab %s (prefix %s): %s\n\n", st.Name, st.Prefix, owner)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NODE\tROLE\tIP\tPOD CIDR\tCPUS\tNETNS")
	for _, n := range st.Nodes {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", n.Name, n.Role, n.IP, n.PodCIDR, dash(n.CPUs), n.Netns)
	}
	fmt.Fprintln(tw, "\t\t\t\t\t")
	fmt.Fprintln(tw, "SERVICE\tVIP:PORT\tENDPOINTS\t\t\t")
	for _, s := range st.Services {
		eps := make([]string, len(s.Endpoints))
		for i, e := range s.Endpoints {
			eps[i] = e.String()
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t\t\t\n", s.Key(), s.Addr(), dash(strings.Join(eps, ",")))
	}
	fmt.Fprintln(tw, "\t\t\t\t\t")
	fmt.Fprintln(tw, "POD\tNODE\tIP\tREADY\tRESTARTS\tCONTAINER CPU(cores) MEM(MiB)")
	for _, p := range st.Pods {
		ready, restarts := 0, 0
		var cs []string
		for _, c := range p.Containers {
			if c.Ready {
				ready++
			}
			restarts += c.Restarts
			cs = append(cs, fmt.Sprintf("%s %.3f %.1f", c.Name, cpu[c.Cgroup], float64(mem[c.Cgroup])/(1<<20)))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d/%d\t%d\t%s\n", p.Key(), p.Node, p.IP, ready, len(p.Containers), restarts, strings.Join(cs, "; "))
	}
	return tw.Flush()
}

// sampleState reads every container's counters twice, over d, for CPU
// cores and the latest working set, keyed by cgroup.
func sampleState(ctx context.Context, st State, d time.Duration) (map[string]float64, map[string]int64) {
	first := map[string]usage{}
	for _, p := range st.Pods {
		for _, c := range p.Containers {
			if u, err := st.Cgroups.read(c.Cgroup); err == nil {
				first[c.Cgroup] = u
			}
		}
	}
	t0 := time.Now()
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
	dt := time.Since(t0).Seconds()
	cpu, mem := map[string]float64{}, map[string]int64{}
	for rel, a := range first {
		b, err := st.Cgroups.read(rel)
		if err != nil {
			continue
		}
		if b.CPUNanos >= a.CPUNanos {
			cpu[rel] = float64(b.CPUNanos-a.CPUNanos) / 1e9 / dt
		}
		mem[rel] = b.WorkingSet
	}
	return cpu, mem
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
