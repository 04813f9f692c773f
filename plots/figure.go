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
}

// Kinds of figure.
const (
	Lines = "lines"
	Bars  = "bars"
)

const (
	panelW  = 3.6 * vg.Inch
	panelH  = 2.9 * vg.Inch
	titleH  = 0.35 * vg.Inch
	noteH   = 0.18 * vg.Inch
	maxCols = 3
	pngDPI  = 160
	minW    = 7 * vg.Inch // wide enough for a paper's caption and the notes
	noteLen = 150         // characters per note line
)

// Save writes the figure to base.pdf, base.svg and base.png.
func (f *Figure) Save(base string) error {
	plots, err := f.panels()
	if err != nil {
		return err
	}
	cols := min(len(plots), maxCols)
	if len(plots) == 4 {
		cols = 2 // two by two, not three and one
	}
	rows := (len(plots) + cols - 1) / cols
	w := max(vg.Length(cols)*panelW, minW, titleStyle().Width(f.Title)+0.4*vg.Inch)
	notes := wrap(f.Notes, noteLen)
	h := vg.Length(rows)*panelH + titleH + vg.Length(len(notes))*noteH + noteH/2
	canvases := []struct {
		ext string
		new func() (vg.CanvasWriterTo, error)
	}{
		{"pdf", func() (vg.CanvasWriterTo, error) { return vgpdf.New(w, h), nil }},
		{"svg", func() (vg.CanvasWriterTo, error) { return vgsvg.New(w, h), nil }},
		{"png", func() (vg.CanvasWriterTo, error) {
			return vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(pngDPI), vgimg.UseBackgroundColor(color.White))}, nil
		}},
	}
	for _, c := range canvases {
		cv, err := c.new()
		if err != nil {
			return err
		}
		f.draw(draw.New(cv), plots, notes, rows, cols)
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

// titleStyle is how the figure's title is set.
func titleStyle() draw.TextStyle {
	return draw.TextStyle{Color: color.Black, Font: font.From(plot.DefaultFont, 12), XAlign: draw.XCenter, YAlign: draw.YTop, Handler: plot.DefaultTextHandler}
}

// draw lays the title, the panels and the notes out on dc.
func (f *Figure) draw(dc draw.Canvas, plots []*plot.Plot, notes []string, rows, cols int) {
	top := dc.Max.Y
	sty := titleStyle()
	dc.FillText(sty, vg.Point{X: (dc.Min.X + dc.Max.X) / 2, Y: top - 4}, f.Title)

	noteFont := font.From(plot.DefaultFont, 8)
	note := draw.TextStyle{Color: color.Gray{Y: 60}, Font: noteFont, XAlign: draw.XLeft, YAlign: draw.YBottom, Handler: plot.DefaultTextHandler}
	for i, n := range notes {
		y := dc.Min.Y + vg.Length(len(notes)-1-i)*noteH + 4
		dc.FillText(note, vg.Point{X: dc.Min.X + 8, Y: y}, n)
	}

	area := draw.Canvas{Canvas: dc.Canvas, Rectangle: vg.Rectangle{
		Min: vg.Point{X: dc.Min.X, Y: dc.Min.Y + vg.Length(len(notes))*noteH + noteH/2},
		Max: vg.Point{X: dc.Max.X, Y: top - titleH},
	}}
	tiles := draw.Tiles{Rows: rows, Cols: cols, PadX: vg.Millimeter * 3, PadY: vg.Millimeter * 3, PadTop: vg.Millimeter, PadBottom: vg.Millimeter, PadLeft: vg.Millimeter * 2, PadRight: vg.Millimeter * 2}
	grid := make([][]*plot.Plot, rows)
	for r := range grid {
		grid[r] = make([]*plot.Plot, cols)
		for c := range grid[r] {
			if i := r*cols + c; i < len(plots) {
				grid[r][c] = plots[i]
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

// panels builds one gonum plot per panel.
func (f *Figure) panels() ([]*plot.Plot, error) {
	if len(f.Panels) == 0 {
		return nil, errors.New("plots: figure has no panels")
	}
	var out []*plot.Plot
	for i, pn := range f.Panels {
		p := plot.New()
		p.Title.Text = pn.Title
		p.Title.TextStyle.Font.Size = 10
		p.X.Label.Text, p.Y.Label.Text = f.XLabel, cmp.Or(pn.YLabel, f.YLabel)
		p.Legend.Top, p.Legend.Left = true, true
		p.Legend.TextStyle.Font.Size = 8
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
			err = addLines(p, pn, logY)
		case Bars:
			err = addBars(p, pn, f.LogY)
		default:
			err = fmt.Errorf("plots: figure kind %q is not lines or bars", f.Kind)
		}
		if err != nil {
			return nil, fmt.Errorf("panel %q: %w", pn.Title, err)
		}
		if i > 0 {
			p.Legend = plot.NewLegend() // one legend, in the first panel, as the papers do
			p.Legend.Top = true
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

// headroom leaves the top quarter of a panel to the legend. A panel
// without data gets the unit range: gonum leaves its range infinite.
func headroom(p *plot.Plot, log bool) {
	if math.IsInf(p.Y.Max, 0) || math.IsInf(p.Y.Min, 0) || p.Y.Max <= p.Y.Min {
		p.Y.Min, p.Y.Max = 0, 1
	}
	if math.IsInf(p.X.Max, 0) || math.IsInf(p.X.Min, 0) {
		p.X.Min, p.X.Max = 0, 1
	}
	if log {
		p.Y.Max *= 4
		return
	}
	p.Y.Max = p.Y.Min + (p.Y.Max-p.Y.Min)*1.3
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

func addLines(p *plot.Plot, pn Panel, logY bool) error {
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
	for i, s := range pn.Series {
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
		p.Legend.Add(s.Label, l, pts)
	}
	return nil
}

func addBars(p *plot.Plot, pn Panel, logY bool) error {
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
	for i, s := range pn.Series {
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
		b.Color = palette[i%len(palette)]
		b.LineStyle.Width = vg.Points(0.5)
		b.Offset = w * vg.Length(float64(i)-float64(n-1)/2)
		p.Add(b)
		p.Legend.Add(s.Label, b)
	}
	p.NominalX(shortLabels(pn.Categories)...)
	return nil
}

// shortLabels drops what every category shares at its start
// ("dmtree-ycsb-a", "dmtree-ycsb-b" -> "a", "b"), cut at a separator, or
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
	out := make([]string, len(cats))
	for i, c := range cats {
		out[i] = strings.TrimPrefix(c, prefix)
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

// wrap breaks notes into lines of at most n characters at spaces.
func wrap(notes []string, n int) []string {
	var out []string
	for _, note := range notes {
		for len(note) > n {
			cut := strings.LastIndex(note[:n], " ")
			if cut <= 0 {
				cut = n
			}
			out = append(out, note[:cut])
			note = strings.TrimLeft(note[cut:], " ")
		}
		out = append(out, note)
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
