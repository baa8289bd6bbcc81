package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/meshbench/meshbench/internal/platform/lab/dataplane"
	"github.com/meshbench/meshbench/internal/versions"
)

// VersionInfo is what `meshbench version` prints.
type VersionInfo struct {
	Version   string   `json:"version"`
	Commit    string   `json:"commit,omitempty"`
	Modified  bool     `json:"modified,omitempty"` // built from a work tree with uncommitted changes
	GoVersion string   `json:"go_version"`
	BuildTags []string `json:"build_tags"`
	// Platforms are the platforms this build can run.
	Platforms []string `json:"platforms"`
	// Envoy is the Envoy the lab would run, and EnvoyVersion its version;
	// EnvoyError says why there is none.
	Envoy        string `json:"envoy,omitempty"`
	EnvoyVersion string `json:"envoy_version,omitempty"`
	EnvoyError   string `json:"envoy_error,omitempty"`
	// Pins are the versions this build installs and expects (package
	// versions' table).
	Pins map[string]string `json:"pins"`
}

// buildCommit is the commit this meshbench was built from: Commit as the
// Makefile sets it, else the Go toolchain's VCS stamp, else "".
func buildCommit() string {
	if Commit != "" {
		return Commit
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" {
				return s.Value
			}
		}
	}
	return ""
}

// versionInfo reads the build's own facts and looks for Envoy.
func versionInfo(ctx context.Context) VersionInfo {
	v := VersionInfo{Version: Version, Commit: buildCommit(), GoVersion: runtime.Version(), BuildTags: []string{}, Platforms: buildPlatforms(), Pins: map[string]string{}}
	for _, p := range versions.Table {
		v.Pins[p.Name] = p.Version
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.modified":
				v.Modified = s.Value == "true"
			case "-tags":
				for _, t := range strings.Split(s.Value, ",") {
					if t != "" {
						v.BuildTags = append(v.BuildTags, t)
					}
				}
			}
		}
	}
	bin, err := dataplane.FindEnvoy()
	if err != nil {
		v.EnvoyError = err.Error()
		return v
	}
	v.Envoy = bin
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if v.EnvoyVersion, err = dataplane.EnvoyVersion(ctx, bin); err != nil {
		v.EnvoyError = err.Error()
	}
	return v
}

func newVersionCmd(s Streams) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "version [-o text|json]",
		Short: "Print meshbench's version, commit, build tags, platforms and the Envoy it would run",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			v := versionInfo(cmd.Context())
			if output == outJSON {
				return writeJSON(s, v)
			}
			commit := v.Commit
			if commit == "" {
				commit = "unknown"
			} else if v.Modified {
				commit += " (modified)"
			}
			tags := strings.Join(v.BuildTags, ",")
			if tags == "" {
				tags = "none"
			}
			platforms := strings.Join(v.Platforms, ", ")
			if labOnly {
				platforms += " (a lab-only build: " + labOnlyFix + ")"
			}
			fmt.Fprintf(s.Out, "meshbench %s\ncommit:     %s\ngo:         %s\nbuild tags: %s\nplatforms:  %s\n", v.Version, commit, v.GoVersion, tags, platforms)
			if v.EnvoyVersion != "" {
				fmt.Fprintf(s.Out, "envoy:      %s (%s)\n", v.EnvoyVersion, v.Envoy)
			} else {
				fmt.Fprintf(s.Out, "envoy:      none found: %s\n", v.EnvoyError)
			}
			for _, p := range versions.Table {
				fmt.Fprintf(s.Out, "pin:        %s %s\n", p.Name, p.Version)
			}
			return nil
		},
	}
	outputFlag(cmd.Flags(), &output, "output format: text or json", outText, outJSON)
	return cmd
}

// Output formats a command that prints a result may offer with -o.
const (
	outText     = "text"
	outJSON     = "json"
	outMarkdown = "markdown"
	outHTML     = "html"
)

// writeJSON prints v as indented JSON on Out.
func writeJSON(s Streams, v any) error {
	enc := json.NewEncoder(s.Out)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
