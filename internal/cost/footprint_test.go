package cost

import (
	"encoding/json"
	"testing"
)

// TestBuiltinFootprintsGolden pins the built-in footprints, figure by
// figure, so that where they are defined can change but not what they are.
func TestBuiltinFootprintsGolden(t *testing.T) {
	t.Parallel()
	fs, err := LoadFootprints("")
	if err != nil {
		t.Fatal(err)
	}
	got, err := json.MarshalIndent(fs, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "footprints.json", append(got, '\n'))
}
