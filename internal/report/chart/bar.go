package chart

import (
	"fmt"
	"math"
)

// Bar is one bar's value; an error bar spans Lo..Hi when Lo < Hi. A NaN
// value draws no bar.
type Bar struct {
	V, Lo, Hi float64
}

// BarSeries is one bar per category, in the chart's category order.
type BarSeries struct {
	Name   string
	Colour string
	Bars   []Bar
}

// Bars is a grouped bar chart: one group per category, one bar per series
// in each group. The value axis is linear and always includes zero.
type Bars struct {
	Title      string
	X          string // the category axis's label
	Y          Axis
	Categories []string
	Series     []BarSeries
}

// SVG draws the chart.
func (b Bars) SVG() string {
	lo, hi := 0.0, 0.0
	has := false
	for _, s := range b.Series {
		for _, v := range s.Bars {
			if math.IsNaN(v.V) {
				continue
			}
			has = true
			lo, hi = math.Min(lo, v.V), math.Max(hi, v.V)
			if v.Lo < v.Hi {
				lo, hi = math.Min(lo, v.Lo), math.Max(hi, v.Hi)
			}
		}
	}
	c := newCanvas(b.Title, marginTop+plotHeight+60)
	if !has || len(b.Categories) == 0 {
		c.text(width/2, marginTop+plotHeight/2, "middle", `fill="#666"`, "no data")
		return c.String()
	}
	ya := b.Y
	ya.Scale = Linear
	y0, y1 := ya.bounds(lo, hi)
	ym := newMapper(Linear, y0, y1, marginTop+plotHeight, marginTop)
	left, right := float64(marginLeft), float64(width-marginRight)
	groupW := (right - left) / float64(len(b.Categories))
	barW := groupW * 0.8 / float64(max(1, len(b.Series)))
	var xt []Tick
	for i, cat := range b.Categories {
		xt = append(xt, Tick{float64(i) + 0.5, cat})
	}
	xm := newMapper(Linear, 0, float64(len(b.Categories)), left, right)
	c.axes(xm, ym, Axis{Label: b.X}, ya, xt, ya.ticks(y0, y1))
	zero := ym.at(0)
	c.line(left, zero, right, zero, `stroke="#333"`)
	names, colours := make([]string, len(b.Series)), make([]string, len(b.Series))
	for si, s := range b.Series {
		col := s.Colour
		if col == "" {
			col = Colour(si)
		}
		names[si], colours[si] = s.Name, col
		c.raw(fmt.Sprintf(`<g class="series"><title>%s</title>`, esc(s.Name)))
		for ci, v := range s.Bars {
			if ci >= len(b.Categories) || math.IsNaN(v.V) {
				continue
			}
			x := left + float64(ci)*groupW + groupW*0.1 + float64(si)*barW
			top, bottom := math.Min(ym.at(v.V), zero), math.Max(ym.at(v.V), zero)
			// A zero value still gets a hairline, so that it reads as
			// measured zero rather than missing.
			h := math.Max(bottom-top, 1)
			fmt.Fprintf(&c.b, `<rect class="mark" x="%s" y="%s" width="%s" height="%s" fill="%s"/>`, f(x+1), f(top), f(barW-2), f(h), col)
			if v.Lo < v.Hi {
				mid := x + barW/2
				l, hh := ym.at(v.Lo), ym.at(v.Hi)
				c.line(mid, l, mid, hh, `stroke="#222" stroke-width="1.5"`)
				c.line(mid-4, l, mid+4, l, `stroke="#222" stroke-width="1.5"`)
				c.line(mid-4, hh, mid+4, hh, `stroke="#222" stroke-width="1.5"`)
			}
		}
		c.raw("</g>")
	}
	c.legend(names, colours, nil)
	return c.String()
}
