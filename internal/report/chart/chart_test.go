package chart

import (
	"encoding/xml"
	"io"
	"math"
	"strings"
	"testing"
)

// elements parses an SVG document and counts its elements by name and
// class, failing the test when it is not well-formed XML.
func elements(t *testing.T, svg string) map[string]int {
	t.Helper()
	d := xml.NewDecoder(strings.NewReader(svg))
	n := map[string]int{}
	for {
		tok, err := d.Token()
		if err == io.EOF {
			return n
		}
		if err != nil {
			t.Fatalf("not well-formed SVG: %v\n%s", err, svg)
		}
		if se, ok := tok.(xml.StartElement); ok {
			n[se.Name.Local]++
			for _, a := range se.Attr {
				if a.Name.Local == "class" {
					n["."+a.Value]++
				}
			}
		}
	}
}

func TestLineMarks(t *testing.T) {
	t.Parallel()
	l := Line{Title: "p50 by release", X: Axis{Label: "release"}, Y: Axis{Label: "ms"},
		Series: []Series{{Name: "sidecar", Points: []Point{{X: 0, Y: 1}, {X: 1, Y: 1.1}, {X: 2, Y: 2}, {X: 3, Y: 2.1}}}},
		Marks:  []Mark{{X: 1.5, Label: "+90% from 1.39.3"}, {X: 9, Label: "off the axis"}}}
	svg := l.SVG()
	n := elements(t, svg)
	if n[".marker"] != 1 || !strings.Contains(svg, "+90% from 1.39.3") || strings.Contains(svg, "off the axis") {
		t.Errorf("%d markers drawn, want the one on the axis, labelled:\n%s", n[".marker"], svg)
	}
}

func TestLineSVG(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name            string
		chart           Line
		marks, circles  int
		errorBarLines   int
		wantText, noTxt string
	}{
		{
			name: "two series with error bars on a log axis",
			chart: Line{Title: "latency <vs> load", X: Axis{Label: "connections", Scale: Log}, Y: Axis{Label: "ms", Scale: Log},
				Series: []Series{
					{Name: "a", Points: []Point{{X: 32, Y: 10, Lo: 9, Hi: 11}, {X: 64, Y: 20, Lo: 19, Hi: 22}}},
					{Name: "b & c", Dashed: true, Points: []Point{{X: 32, Y: 12}, {X: 64, Y: 25}}},
				}},
			marks: 2, circles: 4, errorBarLines: 6, wantText: "latency &lt;vs&gt; load",
		},
		{
			name: "points a log axis cannot show are skipped",
			chart: Line{Title: "t", X: Axis{Scale: Log}, Series: []Series{
				{Name: "a", Points: []Point{{X: 0, Y: 1}, {X: 1, Y: math.NaN()}, {X: 2, Y: 3}}},
			}},
			marks: 1, circles: 1, wantText: "<circle class=\"mark\"",
		},
		{
			name:  "no data",
			chart: Line{Title: "empty", Series: []Series{{Name: "a"}}},
			marks: 0, wantText: "no data",
		},
	}
	for _, tt := range tests {
		svg := tt.chart.SVG()
		n := elements(t, svg)
		if n[".mark"] != tt.marks {
			t.Errorf("%s: %d marks, want %d", tt.name, n[".mark"], tt.marks)
		}
		if n["circle"] != tt.circles {
			t.Errorf("%s: %d circles, want %d", tt.name, n["circle"], tt.circles)
		}
		if tt.errorBarLines > 0 && !strings.Contains(svg, `stroke-width="1.5"`) {
			t.Errorf("%s: no error bars drawn", tt.name)
		}
		if !strings.Contains(svg, tt.wantText) {
			t.Errorf("%s: SVG lacks %q", tt.name, tt.wantText)
		}
		if !strings.HasPrefix(svg, `<svg xmlns="http://www.w3.org/2000/svg"`) {
			t.Errorf("%s: SVG does not declare its namespace", tt.name)
		}
	}
}

func TestBarsSVG(t *testing.T) {
	t.Parallel()
	b := Bars{Title: "overhead", X: "mesh", Y: Axis{Label: "ms"}, Categories: []string{"c=32", "c=64"},
		Series: []BarSeries{
			{Name: "sidecar", Bars: []Bar{{V: 1.5, Lo: 1.2, Hi: 1.9}, {V: 2, Lo: 1.8, Hi: 2.3}}},
			{Name: "ambient", Bars: []Bar{{V: -0.1, Lo: -0.3, Hi: 0.2}, {V: math.NaN()}}},
		}}
	svg := b.SVG()
	n := elements(t, svg)
	if n["rect"] != 1+3 || n[".mark"] != 3 {
		t.Errorf("got %d rects and %d marks, want a background and 3 bars", n["rect"], n[".mark"])
	}
	if b.SVG() != svg {
		t.Error("the same chart drew differently twice")
	}
}

func TestTicks(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		axis   Axis
		lo, hi float64
		want   []string
	}{
		{"linear from zero", Axis{}, 0.3, 9.2, []string{"0", "2", "4", "6", "8", "10"}},
		{"linear tenths", Axis{}, 0.1, 0.52, []string{"0", "0.1", "0.2", "0.3", "0.4", "0.5", "0.6"}},
		{"log over decades", Axis{Scale: Log}, 3, 4000, []string{"10", "100", "1000"}},
		{"log within two decades", Axis{Scale: Log}, 20, 700, []string{"20", "50", "100", "200", "500", "1000"}},
		{"linear across zero", Axis{}, -14, 230, []string{"-50", "0", "50", "100", "150", "200", "250"}},
	}
	for _, tt := range tests {
		lo, hi := tt.axis.bounds(tt.lo, tt.hi)
		var got []string
		for _, tk := range tt.axis.ticks(lo, hi) {
			got = append(got, tk.Label)
		}
		if strings.Join(got, " ") != strings.Join(tt.want, " ") {
			t.Errorf("%s: ticks %v, want %v", tt.name, got, tt.want)
		}
	}
}
