package chart

import (
	"fmt"
	"math"
	"strings"
)

// Point is one data point. When Lo < Hi an error bar spans them.
type Point struct {
	X, Y   float64
	Lo, Hi float64
}

// Series is one line.
type Series struct {
	Name   string
	Colour string // default: the palette colour of its index
	Dashed bool
	Points []Point
}

// Line is a line chart.
type Line struct {
	Title  string
	X, Y   Axis
	Series []Series
	// Marks are vertical lines across the plot at positions on the X
	// axis, each labelled: events such as a change point.
	Marks []Mark
}

// Mark is one labelled position on the X axis.
type Mark struct {
	X     float64
	Label string
}

// maxMarkers is the most points a series may have and still get a marker
// on each; longer series (time series) are drawn as bare lines.
const maxMarkers = 40

// SVG draws the chart. Points that a log axis cannot show (<= 0) and NaNs
// are skipped.
func (l Line) SVG() string {
	xlo, xhi, ylo, yhi := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	for _, s := range l.Series {
		for _, p := range s.Points {
			if !l.drawable(p) {
				continue
			}
			xlo, xhi = math.Min(xlo, p.X), math.Max(xhi, p.X)
			ylo, yhi = math.Min(ylo, p.Y), math.Max(yhi, p.Y)
			if p.Lo < p.Hi {
				ylo, yhi = math.Min(ylo, posOr(l.Y.Scale, p.Lo, p.Y)), math.Max(yhi, p.Hi)
			}
		}
	}
	c := newCanvas(l.Title, marginTop+plotHeight+60)
	if math.IsInf(xlo, 1) {
		c.text(width/2, marginTop+plotHeight/2, "middle", `fill="#666"`, "no data")
		return c.String()
	}
	x0, x1 := l.X.bounds(xlo, xhi)
	y0, y1 := l.Y.bounds(ylo, yhi)
	xm := newMapper(l.X.Scale, x0, x1, marginLeft, width-marginRight)
	ym := newMapper(l.Y.Scale, y0, y1, marginTop+plotHeight, marginTop)
	c.axes(xm, ym, l.X, l.Y, l.X.ticks(x0, x1), l.Y.ticks(y0, y1))
	names, colours, dashed := make([]string, len(l.Series)), make([]string, len(l.Series)), make([]bool, len(l.Series))
	for i, s := range l.Series {
		col := s.Colour
		if col == "" {
			col = Colour(i)
		}
		names[i], colours[i], dashed[i] = s.Name, col, s.Dashed
		l.drawSeries(c, xm, ym, s, col)
	}
	for _, m := range l.Marks {
		if m.X < x0 || m.X > x1 || math.IsNaN(m.X) {
			continue
		}
		px := xm.at(m.X)
		c.raw(fmt.Sprintf(`<g class="marker"><title>%s</title>`, esc(m.Label)))
		c.line(px, marginTop, px, marginTop+plotHeight, `stroke="#b00" stroke-width="1.5" stroke-dasharray="4 3"`)
		c.text(px+3, marginTop+12, "start", `fill="#b00" font-size="11"`, m.Label)
		c.raw("</g>")
	}
	c.legend(names, colours, dashed)
	return c.String()
}

func (l Line) drawable(p Point) bool {
	if math.IsNaN(p.X) || math.IsNaN(p.Y) || math.IsInf(p.X, 0) || math.IsInf(p.Y, 0) {
		return false
	}
	return (l.X.Scale != Log || p.X > 0) && (l.Y.Scale != Log || p.Y > 0)
}

func (l Line) drawSeries(c *canvas, xm, ym mapper, s Series, col string) {
	var d strings.Builder
	var pts []Point
	for _, p := range s.Points {
		if l.drawable(p) {
			pts = append(pts, p)
		}
	}
	for i, p := range pts {
		cmd := "L"
		if i == 0 {
			cmd = "M"
		}
		fmt.Fprintf(&d, "%s%s %s", cmd, f(xm.at(p.X)), f(ym.at(p.Y)))
	}
	if len(pts) == 0 {
		return
	}
	dash := ""
	if s.Dashed {
		dash = ` stroke-dasharray="6 3"`
	}
	c.raw(fmt.Sprintf(`<g class="series"><title>%s</title>`, esc(s.Name)))
	if len(pts) == 1 {
		// A single point has no line; its marker is its mark.
		fmt.Fprintf(&c.b, `<circle class="mark" cx="%s" cy="%s" r="4" fill="%s"/>`, f(xm.at(pts[0].X)), f(ym.at(pts[0].Y)), col)
	} else {
		fmt.Fprintf(&c.b, `<path class="mark" d="%s" fill="none" stroke="%s" stroke-width="2"%s/>`, d.String(), col, dash)
	}
	for _, p := range pts {
		px := xm.at(p.X)
		if p.Lo < p.Hi {
			lo, hi := ym.at(posOr(l.Y.Scale, p.Lo, p.Y)), ym.at(p.Hi)
			stroke := fmt.Sprintf(`stroke="%s" stroke-width="1.5"`, col)
			c.line(px, lo, px, hi, stroke)
			c.line(px-4, lo, px+4, lo, stroke)
			c.line(px-4, hi, px+4, hi, stroke)
		}
		if len(pts) > 1 && len(pts) <= maxMarkers {
			fmt.Fprintf(&c.b, `<circle cx="%s" cy="%s" r="3" fill="%s"/>`, f(px), f(ym.at(p.Y)), col)
		}
	}
	c.raw("</g>")
}

// posOr returns v, or fallback when a log scale cannot show v.
func posOr(s Scale, v, fallback float64) float64 {
	if s == Log && v <= 0 {
		return fallback
	}
	return v
}
