//go:build !labonly

package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/meshbench/meshbench/internal/cpstudy"
	"github.com/meshbench/meshbench/internal/study"
)

// runControlPlane runs the control-plane study, which has no study file:
// it measures istiod against a local API server, not a mesh's data plane.
func runControlPlane(ctx context.Context, s Streams, g *globals, f runFlags) error {
	if f.file != "" {
		return fmt.Errorf("the %s study takes no study file", cpstudy.Name)
	}
	c := cpstudy.DefaultConfig()
	if f.resume != "" {
		// A resumed run keeps the scale points, modes and changes it
		// started with, which its results directory records.
		if f.out != "" || len(f.controlPlane.pods) > 0 || len(f.controlPlane.modes) > 0 || f.controlPlane.changes > 0 {
			return fmt.Errorf("--resume continues the %s study in %s as it started; drop --out, --cp-pods, --cp-modes and --cp-changes", cpstudy.Name, f.resume)
		}
		if f.validate || f.plan {
			return errors.New("--validate and --plan are for a new run; a resumed one runs what its results directory records")
		}
		c.Dir, c.Resume = f.resume, true
	}
	if len(f.controlPlane.pods) > 0 {
		c.Scales = f.controlPlane.pods
	}
	if len(f.controlPlane.modes) > 0 {
		c.Modes = nil
		for _, m := range f.controlPlane.modes {
			c.Modes = append(c.Modes, cpstudy.Mode(m))
		}
	}
	if f.controlPlane.changes > 0 {
		c.Changes = f.controlPlane.changes
	}
	c.Keep = f.controlPlane.keep
	if !c.Resume {
		c.Dir = f.out
	}
	if c.Dir == "" {
		c.Dir = fmt.Sprintf("results/%s-%s", cpstudy.Name, time.Now().Format("20060102-150405"))
	}
	c.Log = g.logger(s)
	if f.validate || f.plan {
		if f.output == "json" {
			enc := json.NewEncoder(s.Out)
			enc.SetIndent("", "  ")
			return enc.Encode(c)
		}
		_, err := fmt.Fprintf(s.Out, "study %s: pods %v, modes %v, %d changes per point, one every %s\n",
			cpstudy.Name, c.Scales, c.Modes, c.Changes, c.ChangeInterval)
		return err
	}
	if _, err := cpstudy.Run(ctx, c); err != nil {
		return err
	}
	_, err := fmt.Fprintf(s.Out, "%s\n", c.Dir)
	return err
}

// controlPlaneInfo is the control-plane study as `meshbench studies`
// lists it beside the presets: no graph and no lab estimate, its meshes
// its modes and its cells its scale points in each.
func controlPlaneInfo() (study.PresetInfo, bool) {
	c := cpstudy.DefaultConfig()
	var modes, pods []string
	for _, m := range c.Modes {
		modes = append(modes, string(m))
	}
	for _, n := range c.Scales {
		pods = append(pods, strconv.Itoa(n))
	}
	return study.PresetInfo{
		Name: cpstudy.Name, Meshes: modes, Repetitions: 1, Cells: len(c.Scales) * len(c.Modes),
		Description: "Istio's control plane at " + strings.Join(pods, ", ") + " pods: real istiod against a local API server, synthetic proxies (no study file; docs/control-plane.md)",
	}, true
}

// controlPlaneReport writes a control-plane study's report.md and charts
// again from its raw data.
func controlPlaneReport(s Streams, dir string) error {
	if err := cpstudy.WriteReport(dir); err != nil {
		return err
	}
	_, err := fmt.Fprintln(s.Out, filepath.Join(dir, "report.md"))
	return err
}
