package chart

import (
	"fmt"
	"strconv"
	"strings"
)

// Palette holds the series colours, chosen to stay apart for readers with
// colour-vision deficiencies (Okabe and Ito's palette).
var Palette = []string{"#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#F0E442", "#000000"}

// Colour returns the palette colour for index i.
func Colour(i int) string { return Palette[i%len(Palette)] }

// Chart sizes, in pixels.
const (
	width       = 760
	plotHeight  = 300
	marginLeft  = 70
	marginTop   = 40
	legendWidth = 190
	marginRight = legendWidth + 16
)

// canvas accumulates an SVG document.
type canvas struct {
	b      strings.Builder
	height int
}

func newCanvas(title string, height int) *canvas {
	c := &canvas{height: height}
	fmt.Fprintf(&c.b, `<svg xmlns="http://www.w3.org/2000/svg" class="chart" viewBox="0 0 %d %d" width="%d" height="%d" role="img" aria-label="%s" font-family="sans-serif" font-size="12">`,
		width, height, width, height, esc(title))
	fmt.Fprintf(&c.b, "<title>%s</title>", esc(title))
	fmt.Fprintf(&c.b, `<rect width="%d" height="%d" fill="#fff"/>`, width, height)
	c.text(width/2, 22, "middle", `font-size="14" font-weight="bold"`, title)
	return c
}

func (c *canvas) text(x, y float64, anchor, attrs, s string) {
	fmt.Fprintf(&c.b, `<text x="%s" y="%s" text-anchor="%s" %s>%s</text>`, f(x), f(y), anchor, attrs, esc(s))
}

func (c *canvas) line(x1, y1, x2, y2 float64, attrs string) {
	fmt.Fprintf(&c.b, `<line x1="%s" y1="%s" x2="%s" y2="%s" %s/>`, f(x1), f(y1), f(x2), f(y2), attrs)
}

func (c *canvas) raw(s string) { c.b.WriteString(s) }

func (c *canvas) String() string { return c.b.String() + "</svg>\n" }

// legend draws one entry per name at the right of the plot.
func (c *canvas) legend(names, colours []string, dashed []bool) {
	x := float64(width - legendWidth)
	for i, n := range names {
		y := float64(marginTop + 10 + i*20)
		dash := ""
		if dashed != nil && dashed[i] {
			dash = ` stroke-dasharray="6 3"`
		}
		c.line(x, y, x+24, y, fmt.Sprintf(`stroke="%s" stroke-width="3"%s`, colours[i], dash))
		c.text(x+30, y+4, "start", "", n)
	}
}

// axes draws the frame, grid, ticks and labels of a plot area.
func (c *canvas) axes(x, y mapper, xa, ya Axis, xt, yt []Tick) {
	top, bottom := float64(marginTop), float64(marginTop+plotHeight)
	left, right := float64(marginLeft), float64(width-marginRight)
	for _, t := range yt {
		py := y.at(t.Value)
		c.line(left, py, right, py, `stroke="#e4e4e4"`)
		c.text(left-6, py+4, "end", `fill="#333"`, t.Label)
	}
	for _, t := range xt {
		px := x.at(t.Value)
		c.line(px, top, px, bottom, `stroke="#f0f0f0"`)
		c.line(px, bottom, px, bottom+5, `stroke="#333"`)
		c.text(px, bottom+18, "middle", `fill="#333"`, t.Label)
	}
	c.line(left, bottom, right, bottom, `stroke="#333"`)
	c.line(left, top, left, bottom, `stroke="#333"`)
	c.text((left+right)/2, bottom+38, "middle", "", xa.Label)
	fmt.Fprintf(&c.b, `<text transform="translate(16 %s) rotate(-90)" text-anchor="middle">%s</text>`, f((top+bottom)/2), esc(ya.Label))
}

func f(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

var escaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;", "'", "&#39;")

func esc(s string) string { return escaper.Replace(s) }
