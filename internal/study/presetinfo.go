package study

import "time"

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
	// included.
	LabEstimate time.Duration `json:"lab_estimate_ns"`
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
		out = append(out, PresetInfo{
			Name: s.Name, Description: s.Description, Graph: s.Workload.Graph, Namespaces: s.Workload.Namespaces,
			Meshes: p.Meshes, Repetitions: s.Repetitions.Min, Cells: len(p.Cells), LabEstimate: p.Estimate,
		})
	}
	return out, nil
}
