package results

import (
	"encoding"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// schemaGolden holds the schema version and every JSON field results
// write, so that a change of shape, say a new field in load.Options that
// Cell.Load carries, cannot pass unnoticed under the same version.
const schemaGolden = "testdata/schema.golden"

func TestSchemaShape(t *testing.T) {
	var lines []string
	for _, root := range []struct {
		name string
		v    any
	}{{"study.json", Index{}}, {"cells/<id>.json", Cell{}}} {
		lines = append(lines, jsonShape(root.name, reflect.TypeOf(root.v), map[reflect.Type]bool{})...)
	}
	got := fmt.Sprintf("schema %d\n%s\n", SchemaVersion, strings.Join(lines, "\n"))
	if *update {
		if err := os.WriteFile(schemaGolden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(schemaGolden)
	if err != nil {
		t.Fatalf("%v (run go test ./internal/results -run TestSchemaShape -update)", err)
	}
	if got == string(want) {
		return
	}
	var wantVersion int
	fmt.Sscanf(string(want), "schema %d", &wantVersion)
	if wantVersion == SchemaVersion {
		t.Fatalf("the results' on-disk shape changed under schema %d: bump SchemaVersion (and make Read accept or convert the old one), then run go test ./internal/results -run TestSchemaShape -update\n%s",
			SchemaVersion, diffLines(string(want), got))
	}
	t.Fatalf("SchemaVersion is %d but %s records %d: run go test ./internal/results -run TestSchemaShape -update", SchemaVersion, schemaGolden, wantVersion)
}

var (
	jsonMarshaler = reflect.TypeFor[json.Marshaler]()
	textMarshaler = reflect.TypeFor[encoding.TextMarshaler]()
)

// jsonShape lists a type's JSON fields as "path type", one per field,
// walking structs, slices and maps the way encoding/json writes them.
// Types that marshal themselves are leaves named by their Go type.
func jsonShape(path string, t reflect.Type, seen map[reflect.Type]bool) []string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Implements(jsonMarshaler) || reflect.PointerTo(t).Implements(jsonMarshaler) ||
		t.Implements(textMarshaler) || reflect.PointerTo(t).Implements(textMarshaler) {
		return []string{path + " " + t.String()}
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return []string{path + " bytes"}
		}
		return jsonShape(path+"[]", t.Elem(), seen)
	case reflect.Map:
		return jsonShape(path+"{"+t.Key().Kind().String()+"}", t.Elem(), seen)
	case reflect.Struct:
		if seen[t] {
			return []string{path + " " + t.String() + " (recursive)"}
		}
		seen[t] = true
		defer delete(seen, t)
		var out []string
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() && !f.Anonymous {
				continue
			}
			name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "-" && opts == "" {
				continue
			}
			if f.Anonymous && name == "" {
				out = append(out, jsonShape(path, f.Type, seen)...)
				continue
			}
			if name == "" {
				name = f.Name
			}
			if opts != "" {
				name += "," + opts
			}
			out = append(out, jsonShape(path+"."+name, f.Type, seen)...)
		}
		slices.Sort(out)
		return out
	}
	return []string{path + " " + t.Kind().String()}
}

// diffLines lists the lines only one side has.
func diffLines(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var out []string
	for _, l := range w {
		if !slices.Contains(g, l) {
			out = append(out, "- "+l)
		}
	}
	for _, l := range g {
		if !slices.Contains(w, l) {
			out = append(out, "+ "+l)
		}
	}
	return strings.Join(out, "\n")
}
