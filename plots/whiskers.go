package plots

import (
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// whiskers draw a series' spread (Series.Lo to Series.Hi) as a vertical
// line with caps at each point: on a bar, offset from its category by the
// bar's offset.
type whiskers struct {
	x, lo, hi []float64
	offset    vg.Length
	color     color.Color
}

// newWhiskers places s's spread at x(j), with each value y drawn at
// y(value), skipping the points without a spread or a y (a value a log
// axis cannot show).
func newWhiskers(s Series, x func(j int) float64, y func(v float64) (float64, bool), offset vg.Length, c color.Color) whiskers {
	w := whiskers{offset: offset, color: c}
	for j := range min(len(s.Y), len(s.Lo), len(s.Hi)) {
		lo, okLo := y(s.Lo[j])
		hi, okHi := y(s.Hi[j])
		if !okLo || !okHi || math.IsNaN(lo) || math.IsNaN(hi) {
			continue
		}
		w.x, w.lo, w.hi = append(w.x, x(j)), append(w.lo, lo), append(w.hi, hi)
	}
	return w
}

// Plot implements plot.Plotter.
func (w whiskers) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	ls := draw.LineStyle{Color: w.color, Width: vg.Points(0.8)}
	capW := vg.Points(2.5)
	for i := range w.x {
		x := trX(w.x[i]) + w.offset
		y0, y1 := trY(w.lo[i]), trY(w.hi[i])
		c.StrokeLine2(ls, x, y0, x, y1)
		c.StrokeLine2(ls, x-capW, y0, x+capW, y0)
		c.StrokeLine2(ls, x-capW, y1, x+capW, y1)
	}
}

// DataRange implements plot.DataRanger, so that the axes hold the
// whiskers.
func (w whiskers) DataRange() (xmin, xmax, ymin, ymax float64) {
	xmin, xmax, ymin, ymax = math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	for i := range w.x {
		xmin, xmax = min(xmin, w.x[i]), max(xmax, w.x[i])
		ymin, ymax = min(ymin, w.lo[i]), max(ymax, w.hi[i])
	}
	return xmin, xmax, ymin, ymax
}
