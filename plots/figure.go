package plots

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"image/color"
	"math"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgpdf"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/dmbench/dmbench/internal/atomicfile"
)

// Figure is what a paper's figure shows.
type Figure struct {
	Title  string
	XLabel string
	YLabel string
	LogX   bool
	LogY   bool
	// Kind is lines (numeric x) or bars (categorical x).
	Kind   string
	Panels []Panel
	// Notes are printed under the panels: the scale of the runs, series
	// whose index is missing, choices the paper left open.
	Notes []string
}

// Panel is one sub-figure.
type Panel struct {
	Title string
	// YLabel, when set, replaces the figure's for this panel.
	YLabel string
	// Categories label the x positions of a bars figure.
	Categories []string
	Series     []Series
}

// Series is one line or one bar per category. Y[i] belongs to X[i] (lines)
// or Categories[i] (bars); NaN marks a point without data.
type Series struct {
	Label string
	X, Y  []float64
	// Lo and Hi, when set, are each point's spread (the lowest and the
	// highest of the runs Y is the mean of), drawn as whiskers.
	Lo, Hi []float64
}

// Kinds of figure.
const (
	Lines = "lines"
	Bars  = "bars"
)

const (
	panelW    = 3.6 * vg.Inch // a panel's width when its labels need no more
	maxPanelW = 7.5 * vg.Inch
	panelH    = 2.9 * vg.Inch
	titleH    = 0.35 * vg.Inch
	noteH     = 0.18 * vg.Inch
	legendH   = 0.2 * vg.Inch // one row of the figure's legend
	maxCols   = 3
	pngDPI    = 160
	minW      = 7 * vg.Inch // wide enough for a paper's caption and the notes
	margin    = vg.Length(8)
	// axisRoom is what a panel spends beside and below its data area on
	// the y axis's ticks and title, and on padding.
	axisRoom = 0.9 * vg.Inch
)

// layout is a figure measured out: its panels as gonum plots, the size
// of each and of the whole, and the legend and notes as they are set.
type layout struct {
	plots      []*plot.Plot
	rows, cols int
	panelW     vg.Length
	legend     [][]legendEntry // rows of the figure's legend
	notes      []string
	w, h       vg.Length
}

// Save writes the figure to base.pdf, base.svg and base.png.
func (f *Figure) Save(base string) error {
	lay, err := f.layout()
	if err != nil {
		return err
	}
	canvases := []struct {
		ext string
		new func() vg.CanvasWriterTo
	}{
		{"pdf", func() vg.CanvasWriterTo { return vgpdf.New(lay.w, lay.h) }},
		{"svg", func() vg.CanvasWriterTo { return vgsvg.New(lay.w, lay.h) }},
		{"png", func() vg.CanvasWriterTo {
			return vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(lay.w, lay.h), vgimg.UseDPI(pngDPI), vgimg.UseBackgroundColor(color.White))}
		}},
	}
	for _, c := range canvases {
		cv := c.new()
		f.draw(draw.New(cv), lay)
		var b bytes.Buffer
		if _, err := cv.WriteTo(&b); err != nil {
			return fmt.Errorf("render %s.%s: %w", base, c.ext, err)
		}
		if err := atomicfile.Write(base+"."+c.ext, b.Bytes()); err != nil {
			return err
		}
	}
	return nil
}

// layout sizes the figure by what its text needs: panels as wide as their
// x tick labels and axis titles ask (within maxPanelW), the figure as wide
// as its panels and its title, the legend in rows above the panels, and
// the notes wrapped to the figure's width.
func (f *Figure) layout() (*layout, error) {
	plots, err := f.panels()
	if err != nil {
		return nil, err
	}
	lay := &layout{plots: plots, cols: min(len(plots), maxCols)}
	if len(plots) == 4 {
		lay.cols = 2 // two by two, not three and one
	}
	lay.rows = (len(plots) + lay.cols - 1) / lay.cols
	lay.panelW = panelW
	for i, p := range plots {
		// A point more than the labels need keeps rounding from
		// thinning labels that fit.
		lay.panelW = max(lay.panelW, min(maxPanelW, axisRoom+f.dataWidth(p, f.Panels[i])+1))
	}
	for _, p := range plots {
		fit(p, lay.panelW-axisRoom, panelH-axisRoom)
	}
	lay.w = max(vg.Length(lay.cols)*lay.panelW, minW, titleStyle().Width(f.Title)+2*margin)
	lay.legend = legendRows(f.legendEntries(), lay.w-2*margin)
	lay.notes = wrapWidth(f.Notes, noteStyle(), lay.w-2*margin)
	lay.h = titleH + vg.Length(len(lay.legend))*legendH + vg.Length(lay.rows)*panelH +
		vg.Length(len(lay.notes))*noteH + noteH/2
	return lay, nil
}

// titleStyle is how the figure's title is set.
func titleStyle() draw.TextStyle {
	return draw.TextStyle{Color: color.Black, Font: font.From(plot.DefaultFont, 12), XAlign: draw.XCenter, YAlign: draw.YTop, Handler: plot.DefaultTextHandler}
}

// noteStyle is how the notes under the panels are set.
func noteStyle() draw.TextStyle {
	return draw.TextStyle{Color: color.Gray{Y: 60}, Font: font.From(plot.DefaultFont, 8), XAlign: draw.XLeft, YAlign: draw.YBottom, Handler: plot.DefaultTextHandler}
}

// draw lays the title, the legend, the panels and the notes out on dc.
func (f *Figure) draw(dc draw.Canvas, lay *layout) {
	top := dc.Max.Y
	dc.FillText(titleStyle(), vg.Point{X: (dc.Min.X + dc.Max.X) / 2, Y: top - 4}, f.Title)
	top -= titleH
	for _, row := range lay.legend {
		drawLegendRow(dc, row, (dc.Min.X+dc.Max.X)/2, top-legendH/2, f.Kind)
		top -= legendH
	}

	note := noteStyle()
	for i, n := range lay.notes {
		y := dc.Min.Y + vg.Length(len(lay.notes)-1-i)*noteH + 4
		dc.FillText(note, vg.Point{X: dc.Min.X + margin, Y: y}, n)
	}

	area := draw.Canvas{Canvas: dc.Canvas, Rectangle: vg.Rectangle{
		Min: vg.Point{X: dc.Min.X, Y: dc.Min.Y + vg.Length(len(lay.notes))*noteH + noteH/2},
		Max: vg.Point{X: dc.Max.X, Y: top},
	}}
	// Panels keep their measured width, centred when the title or the
	// notes make the figure wider.
	spare := (area.Max.X - area.Min.X - vg.Length(lay.cols)*lay.panelW) / 2
	area.Min.X += spare
	area.Max.X -= spare
	tiles := draw.Tiles{Rows: lay.rows, Cols: lay.cols, PadX: vg.Millimeter * 3, PadY: vg.Millimeter * 3, PadTop: vg.Millimeter, PadBottom: vg.Millimeter, PadLeft: vg.Millimeter * 2, PadRight: vg.Millimeter * 2}
	grid := make([][]*plot.Plot, lay.rows)
	for r := range grid {
		grid[r] = make([]*plot.Plot, lay.cols)
		for c := range grid[r] {
			if i := r*lay.cols + c; i < len(lay.plots) {
				grid[r][c] = lay.plots[i]
			}
		}
	}
	canvases := plot.Align(grid, tiles, area)
	for r := range grid {
		for c, p := range grid[r] {
			if p != nil {
				p.Draw(canvases[r][c])
			}
		}
	}
}

// panels builds one gonum plot per panel. Series keep one colour and
// marker across panels (their place in the figure's legend), and no panel
// carries a legend of its own: the figure's sits above them, off the data.
func (f *Figure) panels() ([]*plot.Plot, error) {
	if len(f.Panels) == 0 {
		return nil, errors.New("plots: figure has no panels")
	}
	styles := map[string]int{}
	for i, e := range f.legendEntries() {
		styles[e.label] = i
	}
	var out []*plot.Plot
	for _, pn := range f.Panels {
		p := plot.New()
		p.Title.Text = pn.Title
		p.Title.TextStyle.Font.Size = 10
		p.X.Label.Text, p.Y.Label.Text = f.XLabel, cmp.Or(pn.YLabel, f.YLabel)
		p.X.Label.TextStyle.Font.Size, p.Y.Label.TextStyle.Font.Size = 10, 10
		p.Add(plotter.NewGrid())
		logY := f.LogY && f.Kind == Lines && hasPositive(pn)
		p.Y.Tick.Marker = plainTicks{}
		if logY { // an empty panel keeps a linear axis: a log axis needs data
			p.Y.Scale, p.Y.Tick.Marker = plot.LogScale{}, plot.LogTicks{Prec: -1}
		}
		var err error
		switch f.Kind {
		case Lines:
			if f.LogX {
				p.X.Scale, p.X.Tick.Marker = plot.LogScale{}, plot.LogTicks{Prec: -1}
			}
			err = addLines(p, pn, logY, styles)
		case Bars:
			err = addBars(p, pn, f.LogY, styles)
		default:
			err = fmt.Errorf("plots: figure kind %q is not lines or bars", f.Kind)
		}
		if err != nil {
			return nil, fmt.Errorf("panel %q: %w", pn.Title, err)
		}
		if !f.LogY || f.Kind == Bars {
			p.Y.Min = 0 // axes start at zero (for log bars: the lowest decade)
		}
		headroom(p, logY)
		out = append(out, p)
	}
	return out, nil
}

// palette and shapes tell series apart in colour and in black and white.
var palette = []color.Color{
	color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff}, color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff},
	color.RGBA{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff}, color.RGBA{R: 0xff, G: 0x7f, B: 0x0e, A: 0xff},
	color.RGBA{R: 0x94, G: 0x67, B: 0xbd, A: 0xff}, color.RGBA{R: 0x8c, G: 0x56, B: 0x4b, A: 0xff},
	color.RGBA{R: 0x7f, G: 0x7f, B: 0x7f, A: 0xff}, color.RGBA{R: 0x17, G: 0xbe, B: 0xcf, A: 0xff},
}

var shapes = []draw.GlyphDrawer{
	draw.CircleGlyph{}, draw.SquareGlyph{}, draw.TriangleGlyph{}, draw.CrossGlyph{},
	draw.PlusGlyph{}, draw.RingGlyph{}, draw.BoxGlyph{}, draw.PyramidGlyph{},
}

// hasPositive reports whether a panel has a value a log axis can show.
func hasPositive(pn Panel) bool {
	for _, s := range pn.Series {
		for _, y := range s.Y {
			if y > 0 {
				return true
			}
		}
	}
	return false
}

// headroom leaves a little room above the highest point. A panel without
// data gets the unit range: gonum leaves its range infinite. A log panel
// whose points share one value (a sweep interrupted after its first run)
// gets the decade around it, since a log axis cannot start at zero.
func headroom(p *plot.Plot, log bool) {
	if log && p.Y.Min == p.Y.Max && p.Y.Max > 0 && !math.IsInf(p.Y.Max, 0) {
		p.Y.Min, p.Y.Max = p.Y.Min/math.Sqrt(10), p.Y.Max*math.Sqrt(10)
	}
	if math.IsInf(p.Y.Max, 0) || math.IsInf(p.Y.Min, 0) || p.Y.Max <= p.Y.Min {
		p.Y.Min, p.Y.Max = 0, 1
	}
	if math.IsInf(p.X.Max, 0) || math.IsInf(p.X.Min, 0) {
		p.X.Min, p.X.Max = 0, 1
	}
	if log {
		p.Y.Max *= 1.5
		return
	}
	p.Y.Max = p.Y.Min + (p.Y.Max-p.Y.Min)*1.08
}

// plainTicks are gonum's default ticks labelled without trailing zeros
// (25 and 50, not 25.00 and 50.00), as the papers label their axes.
type plainTicks struct{}

func (plainTicks) Ticks(lo, hi float64) []plot.Tick {
	ts := plot.DefaultTicks{}.Ticks(lo, hi)
	for i, t := range ts {
		if v, err := strconv.ParseFloat(t.Label, 64); t.Label != "" && err == nil {
			ts[i].Label = strconv.FormatFloat(v, 'f', -1, 64)
		}
	}
	return ts
}

// xTicks marks the swept values themselves, as the papers' axes do.
type xTicks []float64

func (t xTicks) Ticks(lo, hi float64) []plot.Tick {
	var ts []plot.Tick
	for _, x := range t {
		if x >= lo && x <= hi {
			ts = append(ts, plot.Tick{Value: x, Label: strconv.FormatFloat(x, 'g', -1, 64)})
		}
	}
	return ts
}

func addLines(p *plot.Plot, pn Panel, logY bool, styles map[string]int) error {
	var xs []float64
	for _, s := range pn.Series {
		for _, x := range s.X {
			if !slices.Contains(xs, x) {
				xs = append(xs, x)
			}
		}
	}
	if len(xs) <= 12 {
		slices.Sort(xs)
		p.X.Tick.Marker = xTicks(xs)
	}
	for _, s := range pn.Series {
		i := styles[s.Label]
		var xys plotter.XYs
		for j := range s.X {
			if !math.IsNaN(s.Y[j]) && (!logY || s.Y[j] > 0) {
				xys = append(xys, plotter.XY{X: s.X[j], Y: s.Y[j]})
			}
		}
		if len(xys) == 0 {
			continue
		}
		l, pts, err := plotter.NewLinePoints(xys)
		if err != nil {
			return err
		}
		c := palette[i%len(palette)]
		l.Color, l.Width = c, vg.Points(1.3)
		pts.Color, pts.Shape, pts.Radius = c, shapes[i%len(shapes)], vg.Points(2.6)
		p.Add(l, pts)
		if s.Lo != nil {
			y := func(v float64) (float64, bool) { return v, !logY || v > 0 }
			p.Add(newWhiskers(s, func(j int) float64 { return s.X[j] }, y, 0, c))
		}
	}
	return nil
}

func addBars(p *plot.Plot, pn Panel, logY bool, styles map[string]int) error {
	n := len(pn.Series)
	if n == 0 {
		return nil
	}
	// A bar starts at zero, which a log axis cannot show: on a log figure
	// bars show decades above the lowest one on a linear axis, labelled
	// with the values they stand for.
	base := 0.0
	if logY {
		low := math.Inf(1)
		for _, s := range pn.Series {
			for _, y := range s.Y {
				if y > 0 {
					low = min(low, y)
				}
			}
		}
		if !math.IsInf(low, 1) {
			base = math.Floor(math.Log10(low))
		}
		p.Y.Scale, p.Y.Tick.Marker = plot.LinearScale{}, decades{base}
	}
	// The bars of a category fill three quarters of its share of the panel.
	w := panelW * 3 / 4 / vg.Length(max(len(pn.Categories), 1)*n) * 3 / 4
	for k, s := range pn.Series {
		vals := make(plotter.Values, len(pn.Categories))
		for j := range vals {
			if j >= len(s.Y) || math.IsNaN(s.Y[j]) || logY && s.Y[j] <= 0 {
				continue
			}
			vals[j] = s.Y[j]
			if logY {
				vals[j] = math.Log10(s.Y[j]) - base
			}
		}
		b, err := plotter.NewBarChart(vals, w)
		if err != nil {
			return err
		}
		b.Color = palette[styles[s.Label]%len(palette)]
		b.LineStyle.Width = vg.Points(0.5)
		b.Offset = w * vg.Length(float64(k)-float64(n-1)/2)
		p.Add(b)
		if s.Lo != nil {
			y := func(v float64) (float64, bool) { return v, true }
			if logY {
				y = func(v float64) (float64, bool) { return math.Log10(v) - base, v > 0 }
			}
			p.Add(newWhiskers(s, func(j int) float64 { return float64(j) }, y, b.Offset, color.Black))
		}
	}
	p.NominalX(shortLabels(pn.Categories)...)
	// Each category gets an equal share of the axis, its bars centred in it.
	p.X.Min, p.X.Max = -0.5, float64(len(pn.Categories))-0.5
	return nil
}

// shortLabels drops what every category shares at its start and at its
// end ("dmtree-ycsb-a", "dmtree-ycsb-b" -> "a", "b"; "latency.READ.p99",
// "latency.SCAN.p99" -> "READ", "SCAN"), cut at a separator, or
// keeps only the last part of dotted names when those are unique, so that
// labels fit under their bars.
func shortLabels(cats []string) []string {
	if len(cats) < 2 {
		return cats
	}
	prefix := cats[0]
	for _, c := range cats[1:] {
		for !strings.HasPrefix(c, prefix) {
			prefix = prefix[:len(prefix)-1]
		}
	}
	prefix = prefix[:strings.LastIndexAny(prefix, "-_./ ")+1]
	suffix := cats[0][len(prefix):]
	for _, c := range cats[1:] {
		for !strings.HasSuffix(c, suffix) {
			suffix = suffix[1:]
		}
	}
	if i := strings.IndexAny(suffix, "-_./ "); i >= 0 {
		suffix = suffix[i:]
	} else {
		suffix = ""
	}
	out := make([]string, len(cats))
	for i, c := range cats {
		out[i] = strings.TrimSuffix(strings.TrimPrefix(c, prefix), suffix)
	}
	// Metric names from different families (activity.total.read,
	// steps.total.crc) share no prefix; their last parts still tell them
	// apart.
	last := make([]string, len(cats))
	for i, c := range out {
		last[i] = c[strings.LastIndex(c, ".")+1:]
	}
	if slices.Equal(slices.Compact(slices.Sorted(slices.Values(last))), slices.Sorted(slices.Values(last))) {
		return last
	}
	return out
}

// decades ticks a linear axis of log10(value) - base at whole decades.
type decades struct{ base float64 }

func (d decades) Ticks(lo, hi float64) []plot.Tick {
	var ts []plot.Tick
	for k := math.Floor(lo); k <= math.Ceil(hi); k++ {
		ts = append(ts, plot.Tick{Value: k, Label: strconv.FormatFloat(math.Pow(10, k+d.base), 'g', -1, 64)})
	}
	return ts
}
