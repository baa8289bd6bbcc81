package kube

import (
	"bytes"
	"fmt"
	"strings"

	"sigs.k8s.io/yaml"
)

// labelRenderer is a Helm post-renderer that labels every rendered object
// with its release and run, so that meshbench finds chart objects by label
// too.
type labelRenderer struct{ release, run string }

// Run implements postrender.PostRenderer.
func (l labelRenderer) Run(in *bytes.Buffer) (*bytes.Buffer, error) {
	out := new(bytes.Buffer)
	for _, doc := range splitYAML(in.String()) {
		var obj map[string]any
		if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
			return nil, fmt.Errorf("post-render: %w", err)
		}
		if len(obj) == 0 {
			continue
		}
		md, _ := obj["metadata"].(map[string]any)
		if md == nil {
			md = map[string]any{}
			obj["metadata"] = md
		}
		lbl, _ := md["labels"].(map[string]any)
		if lbl == nil {
			lbl = map[string]any{}
			md["labels"] = lbl
		}
		lbl[labelRelease] = l.release
		lbl[labelRun] = l.run
		b, err := yaml.Marshal(obj)
		if err != nil {
			return nil, fmt.Errorf("post-render: %w", err)
		}
		out.WriteString("---\n")
		out.Write(b)
	}
	return out, nil
}

// splitYAML splits a multi-document YAML stream at its "---" lines.
func splitYAML(s string) []string {
	var docs []string
	var cur strings.Builder
	for _, line := range strings.SplitAfter(s, "\n") {
		if strings.TrimRight(line, " \t\r\n") == "---" || strings.HasPrefix(line, "--- ") {
			docs = append(docs, cur.String())
			cur.Reset()
			continue
		}
		cur.WriteString(line)
	}
	return append(docs, cur.String())
}
