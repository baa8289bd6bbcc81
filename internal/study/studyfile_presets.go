package study

import (
	"embed"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// presetFS holds the built-in studies as study files, so that each reads
// as an example of the format and goes through the same Parse.
//
//go:embed presets/*.yaml
var presetFS embed.FS

// DefaultPreset is the study `meshbench run` runs without a file.
const DefaultPreset = "quick"

// PresetNames lists the built-in studies, sorted.
func PresetNames() []string {
	entries, err := presetFS.ReadDir("presets")
	if err != nil {
		return nil // unreachable: the directory is embedded
	}
	var out []string
	for _, e := range entries {
		out = append(out, strings.TrimSuffix(e.Name(), ".yaml"))
	}
	slices.Sort(out)
	return out
}

// PresetSource returns a built-in study's file.
func PresetSource(name string) ([]byte, error) {
	data, err := presetFS.ReadFile("presets/" + name + ".yaml")
	if err != nil || strings.ContainsAny(name, "/.") {
		return nil, fmt.Errorf("%w %q; built-ins are %s", ErrUnknownPreset, name, joinNames(PresetNames()))
	}
	return data, nil
}

// ErrUnknownPreset is a built-in study name that names none.
var ErrUnknownPreset = errors.New("unknown built-in study")

// Preset parses a built-in study, with the command line's platform
// settings over its own, and returns it with its file.
func Preset(name string, o PlatformOverride) (*Study, []byte, error) {
	data, err := PresetSource(name)
	if err != nil {
		return nil, nil, err
	}
	s, err := parse(data, graphFiles(""), o)
	if err != nil {
		return nil, nil, fmt.Errorf("built-in study %q: %w", name, err)
	}
	return s, data, nil
}

// PresetInfo summarizes a built-in study.
type PresetInfo struct {
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Graph       string   `json:"graph"`
	Namespaces  int      `json:"namespaces"`
	Meshes      []string `json:"meshes"`
	Repetitions int      `json:"repetitions"`
	Cells       int      `json:"cells"`
	// LabEstimate is the plan's estimated duration on the lab, calibration
	// included, on a quiet host; LabNoisyEstimate the most it may take on
	// a noisy one (NoisyEstimate).
	LabEstimate      time.Duration `json:"lab_estimate_ns"`
	LabNoisyEstimate time.Duration `json:"lab_noisy_estimate_ns"`
}

// Presets summarizes every built-in study, by name.
func Presets() ([]PresetInfo, error) {
	var out []PresetInfo
	for _, name := range PresetNames() {
		s, _, err := Preset(name, PlatformOverride{})
		if err != nil {
			return nil, err
		}
		p, err := NewPlan(s, s.ScalingFor(0))
		if err != nil {
			return nil, err
		}
		noisy, err := NoisyEstimate(s, s.ScalingFor(0))
		if err != nil {
			return nil, err
		}
		out = append(out, PresetInfo{
			Name: s.Name, Description: s.Description, Graph: s.Workload.Graph, Namespaces: s.Workload.Namespaces,
			Meshes: p.Meshes, Repetitions: s.Repetitions.Min, Cells: len(p.Cells), LabEstimate: p.Estimate, LabNoisyEstimate: noisy,
		})
	}
	return out, nil
}
