package analysis

import (
	"errors"
	"strings"
	"testing"
)

// TestCheckComparableRefusesAnotherOfferedLoad checks that the gate
// refuses two runs whose offered loads differ, naming the difference and
// the --vary that accepts it, and takes runs whose loads agree.
func TestCheckComparableRefusesAnotherOfferedLoad(t *testing.T) {
	t.Parallel()
	load := func(rate float64) *Dataset {
		d, err := Load(fixtureDir, Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range d.Configs {
			for _, m := range d.Meshes {
				if g := d.Group(m, c); g != nil {
					for _, r := range g.Reps {
						r.Values[Offered] = rate
					}
				}
			}
		}
		return d
	}
	a := load(100)
	if err := CheckComparable(a, load(101), nil); err != nil {
		t.Errorf("runs 1%% apart refused: %v", err)
	}
	err := CheckComparable(a, load(120), nil)
	var inc *IncomparableError
	if !errors.As(err, &inc) {
		t.Fatalf("runs at 100 and 120 req/s: %v, want an IncomparableError", err)
	}
	for _, d := range inc.Differences {
		if d.Kind != VaryOfferedLoad {
			t.Errorf("difference %s: %s, want only the offered load", d.Kind, d.Text)
		}
	}
	if msg := err.Error(); !strings.Contains(msg, "offered-load: ") || !strings.Contains(msg, "--vary offered-load") {
		t.Errorf("refusal %q does not name the offered load and its --vary", msg)
	}
	if err := CheckComparable(a, load(120), []string{VaryOfferedLoad}); err != nil {
		t.Errorf("--vary offered-load still refused: %v", err)
	}
}

// TestCheckComparableRefusesOtherArrivals checks that the gate refuses
// two runs at the same rate whose arrivals differ, evenly spaced in A and
// Poisson in B, naming the difference and its --vary; that results
// recording no arrival process (before schema 19) read as uniform; and
// that runs with the same arrivals pass.
func TestCheckComparableRefusesOtherArrivals(t *testing.T) {
	t.Parallel()
	load := func(arrivals string) *Dataset {
		d, err := Load(fixtureDir, Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range d.Configs {
			for _, m := range d.Meshes {
				if g := d.Group(m, c); g != nil {
					for _, r := range g.Reps {
						r.Values[Offered] = 100
						r.Load.Options.Rate, r.Load.Options.Arrivals = 100, arrivals
					}
				}
			}
		}
		return d
	}
	if err := CheckComparable(load(""), load("uniform"), nil); err != nil {
		t.Errorf("old results (no arrivals recorded) against uniform ones refused: %v", err)
	}
	if err := CheckComparable(load("poisson"), load("poisson"), nil); err != nil {
		t.Errorf("two Poisson runs refused: %v", err)
	}
	err := CheckComparable(load(""), load("poisson"), nil)
	var inc *IncomparableError
	if !errors.As(err, &inc) {
		t.Fatalf("uniform against Poisson arrivals: %v, want an IncomparableError", err)
	}
	for _, d := range inc.Differences {
		if d.Kind != VaryArrivals {
			t.Errorf("difference %s: %s, want only the arrivals", d.Kind, d.Text)
		}
		if !strings.Contains(d.Text, "uniform arrivals in A, Poisson arrivals in B") {
			t.Errorf("difference %q does not say which arrivals each run had", d.Text)
		}
	}
	if msg := err.Error(); !strings.Contains(msg, "--vary arrivals") {
		t.Errorf("refusal %q does not name its --vary", msg)
	}
	if err := CheckComparable(load(""), load("poisson"), []string{VaryArrivals}); err != nil {
		t.Errorf("--vary arrivals still refused: %v", err)
	}
}
