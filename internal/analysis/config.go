package analysis

import (
	"cmp"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// LoadConfig is one load configuration: a cell's sweep values without its mesh
// and repetition.
type LoadConfig struct {
	Key    string            // canonical form of Params, unique per configuration
	Params map[string]string // parameter name -> value
}

func newConfig(params map[string]string) LoadConfig {
	keys := slices.Sorted(maps.Keys(params))
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + params[k]
	}
	return LoadConfig{Key: strings.Join(parts, ","), Params: maps.Clone(params)}
}

// Label is the configuration as a reader sees it.
func (c LoadConfig) Label() string {
	if c.Key == "" {
		return "the study's only load configuration"
	}
	return strings.ReplaceAll(c.Key, ",", ", ")
}

// Without returns the configuration with one parameter removed: the
// configurations a sweep over that parameter shares.
func (c LoadConfig) Without(param string) LoadConfig {
	p := maps.Clone(c.Params)
	delete(p, param)
	return newConfig(p)
}

// Param is one sweep parameter and its values in ascending order.
type Param struct {
	Name   string
	Values []string
}

// compareValues orders parameter values numerically when both are numbers.
func compareValues(a, b string) int {
	fa, ea := strconv.ParseFloat(a, 64)
	fb, eb := strconv.ParseFloat(b, 64)
	if ea == nil && eb == nil {
		return cmp.Compare(fa, fb)
	}
	return cmp.Compare(a, b)
}

// compareConfigs orders configurations by their parameters in name order,
// values compared numerically.
func compareConfigs(a, b LoadConfig) int {
	names := slices.Sorted(maps.Keys(a.Params))
	for _, n := range slices.Sorted(maps.Keys(b.Params)) {
		if _, ok := a.Params[n]; !ok {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	for _, n := range names {
		if c := compareValues(a.Params[n], b.Params[n]); c != 0 {
			return c
		}
	}
	return 0
}

// Value returns a numeric parameter's value and whether it is numeric.
func (c LoadConfig) Value(param string) (float64, bool) {
	f, err := strconv.ParseFloat(c.Params[param], 64)
	return f, err == nil
}

// With returns the configuration with one parameter set.
func (c LoadConfig) With(param, value string) LoadConfig {
	p := maps.Clone(c.Params)
	if p == nil {
		p = map[string]string{}
	}
	p[param] = value
	return newConfig(p)
}
