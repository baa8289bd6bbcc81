package cluster

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
)

// ExecOptions say what to run where, as kubectl exec does.
type ExecOptions struct {
	StateDir string
	// Target is a pod, "namespace/name" or a name unique in the lab, or a
	// node, "node/NAME".
	Target string
	Argv   []string
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
}

// Exec runs a command inside a pod's (or node's) network namespace, with
// Kubernetes' <SERVICE>_SERVICE_HOST and _PORT variables for the Services
// of the pod's namespace, so a shell there can reach them by name:
// curl http://$TIER_1_SERVICE_HOST:$TIER_1_SERVICE_PORT/.
func Exec(ctx context.Context, o ExecOptions) error {
	if len(o.Argv) == 0 {
		return fmt.Errorf("exec: no command given")
	}
	st, err := readState(o.StateDir)
	if err != nil {
		return fmt.Errorf("exec: no lab in %s: %w", o.StateDir, err)
	}
	netns, namespace, err := st.resolve(o.Target)
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, o.Argv[0], o.Argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = o.Stdin, o.Stdout, o.Stderr
	cmd.Env = append(os.Environ(), serviceEnv(st.Services, namespace)...)
	if err := startIn(netns, cmd); err != nil {
		return fmt.Errorf("exec in %s: %w", o.Target, err)
	}
	if err := cmd.Wait(); err != nil {
		return fmt.Errorf("exec in %s: %w", o.Target, err)
	}
	return nil
}

// resolve finds a target's network namespace and Kubernetes namespace.
func (st State) resolve(target string) (netns, namespace string, err error) {
	if name, ok := strings.CutPrefix(target, "node/"); ok {
		for _, n := range st.Nodes {
			if n.Name == name {
				return n.Netns, "", nil
			}
		}
		return "", "", fmt.Errorf("no node %q in lab %s", name, st.Name)
	}
	var found []Pod
	for _, p := range st.Pods {
		if p.Key() == target || p.Name == target {
			found = append(found, p)
		}
	}
	switch len(found) {
	case 0:
		return "", "", fmt.Errorf("no pod %q in lab %s (see meshbench lab status)", target, st.Name)
	case 1:
		return found[0].Netns, found[0].Namespace, nil
	}
	keys := make([]string, len(found))
	for i, p := range found {
		keys[i] = p.Key()
	}
	sort.Strings(keys)
	return "", "", fmt.Errorf("pod name %q is in several namespaces: give one of %s", target, strings.Join(keys, ", "))
}

// serviceEnv is the Services of a namespace as Kubernetes' variables.
func serviceEnv(svcs []Service, namespace string) []string {
	var env []string
	for _, s := range svcs {
		if s.Namespace != namespace {
			continue
		}
		n := strings.ToUpper(strings.ReplaceAll(s.Name, "-", "_"))
		env = append(env, n+"_SERVICE_HOST="+s.VIP.String(), n+"_SERVICE_PORT="+strconv.Itoa(s.Port))
	}
	return env
}
