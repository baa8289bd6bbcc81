package topology

import (
	"embed"
	"fmt"
	"sort"
	"strings"
)

// builtinFS holds the built-in graphs as YAML, so that they read as
// examples of the format and go through the same Parse as user files.
//
//go:embed builtin/*.yaml
var builtinFS embed.FS

// BuiltinNames lists the built-in graphs, sorted.
func BuiltinNames() []string {
	entries, err := builtinFS.ReadDir("builtin")
	if err != nil {
		return nil // unreachable: the directory is embedded
	}
	var out []string
	for _, e := range entries {
		out = append(out, strings.TrimSuffix(e.Name(), ".yaml"))
	}
	sort.Strings(out)
	return out
}

// Builtin returns a fresh copy of the named built-in graph: tiered,
// bookinfo or boutique.
func Builtin(name string) (*Graph, error) {
	data, err := builtinFS.ReadFile("builtin/" + name + ".yaml")
	if err != nil || strings.ContainsAny(name, "/.") {
		return nil, fmt.Errorf("unknown built-in graph %q; built-ins are %s", name, strings.Join(BuiltinNames(), ", "))
	}
	g, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("built-in graph %q: %w", name, err)
	}
	return g, nil
}
