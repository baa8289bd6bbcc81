package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/meshbench/meshbench/internal/analysis"
)

const reportSchema = "../../docs/report.schema.json"

// reportJSON is a document as `report -o json` prints it.
func reportJSON(t *testing.T, doc *Document) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := printDocument(Options{Print: PrintJSON, Stdout: &buf}, doc); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func compileReportSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	s, err := jsonschema.NewCompiler().Compile(reportSchema)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func validate(s *jsonschema.Schema, data []byte) error {
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return err
	}
	return s.Validate(inst)
}

// verdictColumns maps each verdict table header to the JSON figures its
// cells draw, in the cell's order. A column without an entry fails the
// test: every figure the table shows must be in the JSON.
func verdictColumns(header string) ([]string, bool) {
	switch {
	case header == "Mesh":
		return nil, true
	case header == "Added p50 (ms)":
		return []string{"added_p50_ms"}, true
	case header == "Added p95 / p99 (ms)":
		return []string{"added_p95_ms", "added_p99_ms"}, true
	case header == "p50 (ms)":
		return []string{"p50_ms"}, true
	case header == "p95 / p99 (ms)":
		return []string{"p95_ms", "p99_ms"}, true
	case header == "Throughput (req/s)" || header == "Connection ceiling (connections)":
		return []string{"throughput"}, true
	case header == "Data-plane CPU (cores)":
		return []string{"data_plane_cpu_cores"}, true
	case strings.HasPrefix(header, "CPU per proxy pass (cores per 1,000 req/s; Istio publishes "):
		return []string{"cpu_per_proxy_pass_per_1000rps"}, true
	case header == "Memory per proxy (MiB)":
		return []string{"memory_per_proxy_mib"}, true
	case header == "USD per million requests":
		return []string{"usd_per_million_requests"}, true
	case header == "Control plane CPU (cores)":
		return []string{"control_plane_cpu_cores"}, true
	case header == "Control plane memory (MiB)":
		return []string{"control_plane_memory_mib"}, true
	}
	return nil, false
}

// TestReportJSONSchema: `report -o json` of the package's fixture (a
// closed-loop sweep), of a real lab run of quick (open loop) and of a
// capacity search validates against docs/report.schema.json, and every
// figure the verdict's table shows is in the JSON's verdict as a number
// its cell starts with; a figure turned into a string, or stripped of its
// value, fails the schema.
func TestReportJSONSchema(t *testing.T) {
	t.Parallel()
	schema := compileReportSchema(t)
	lab, err := analysis.Load("testdata/lab-quick", analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for name, d := range map[string]*analysis.Dataset{"fixture": loadFixture(t), "lab-quick": lab, "capacity": loadCapacityFixture(t)} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			doc := Build(d)
			data := reportJSON(t, doc)
			if err := validate(schema, data); err != nil {
				t.Fatalf("report -o json does not validate against %s: %v", reportSchema, err)
			}
			var out struct {
				Verdict struct {
					Meshes []map[string]any `json:"meshes"`
				} `json:"verdict"`
			}
			if err := json.Unmarshal(data, &out); err != nil {
				t.Fatal(err)
			}
			tbl := doc.Sections[0].Blocks[len(doc.Sections[0].Blocks)-1].Table
			for _, b := range doc.Sections[0].Blocks {
				if b.Table != nil {
					tbl = b.Table
				}
			}
			if tbl == nil || len(tbl.Rows) != len(out.Verdict.Meshes) {
				t.Fatalf("the verdict table has %v, the JSON %d meshes", tbl, len(out.Verdict.Meshes))
			}
			figures := 0
			for i, row := range tbl.Rows {
				m := out.Verdict.Meshes[i]
				if m["mesh"] != row[0] {
					t.Fatalf("row %d is %s, the JSON's mesh %v", i, row[0], m["mesh"])
				}
				for j, h := range tbl.Header {
					keys, ok := verdictColumns(h)
					if !ok {
						t.Fatalf("verdict column %q has no JSON figure", h)
					}
					parts := []string{row[j]}
					if len(keys) == 2 {
						parts = strings.SplitN(row[j], " / ", 2)
					}
					for k, key := range keys {
						cell := "—"
						if k < len(parts) {
							cell = parts[k]
						}
						f, present := m[key].(map[string]any)
						if cell == "—" {
							if m[key] != nil {
								t.Errorf("%s %s: the table shows a dash, the JSON %v", row[0], key, m[key])
							}
							continue
						}
						if !present {
							t.Errorf("%s %s: the table shows %q, the JSON has no figure (%v)", row[0], key, cell, m[key])
							continue
						}
						v, isNum := f["value"].(float64)
						if !isNum {
							t.Errorf("%s %s: value %v is not a number", row[0], key, f["value"])
							continue
						}
						want := num(v)
						if key == "usd_per_million_requests" {
							want = usd(v)
						}
						if !strings.Contains(cell, want) {
							t.Errorf("%s %s: the table shows %q, the JSON %v", row[0], key, cell, v)
						}
						figures++
					}
				}
			}
			if figures < len(tbl.Rows) {
				t.Errorf("checked %d figures in %d rows", figures, len(tbl.Rows))
			}

			// The schema holds the figures to numbers: a string in a
			// figure's place, or a figure without its value, fails.
			var raw map[string]any
			if err := json.Unmarshal(data, &raw); err != nil {
				t.Fatal(err)
			}
			mesh := raw["verdict"].(map[string]any)["meshes"].([]any)[len(out.Verdict.Meshes)-1].(map[string]any)
			key := ""
			for k, v := range mesh {
				if _, ok := v.(map[string]any); ok {
					key = k
					break
				}
			}
			if key == "" {
				t.Fatal("the last mesh has no figure")
			}
			fig := mesh[key]
			for what, bad := range map[string]any{"a string": jsonText(fig), "no value": without(fig.(map[string]any), "value"), "a string value": with(fig.(map[string]any), "value", "1.5")} {
				mesh[key] = bad
				b, _ := json.Marshal(raw)
				if validate(schema, b) == nil {
					t.Errorf("a verdict figure %s (%s) validates", what, key)
				}
			}
			mesh[key] = fig
		})
	}
}

func jsonText(fig any) string { b, _ := json.Marshal(fig); return string(b) }

func without(m map[string]any, k string) map[string]any {
	out := map[string]any{}
	for key, v := range m {
		if key != k {
			out[key] = v
		}
	}
	return out
}

func with(m map[string]any, k string, v any) map[string]any {
	out := without(m, k)
	out[k] = v
	return out
}

// TestVerdictJSONGolden keeps the fixture's verdict as JSON.
func TestVerdictJSONGolden(t *testing.T) {
	t.Parallel()
	b, err := json.MarshalIndent(Build(loadFixture(t)).Verdict, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "verdict.json.golden", append(b, '\n'))
}
