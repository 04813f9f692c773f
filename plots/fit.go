package plots

import (
	"image/color"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// tickGap is the least room between two neighbouring tick labels.
const tickGap = vg.Length(6)

// dataWidth is the data-area width at which p's x tick labels, the panel's
// title and its x axis title's longest word all fit. Labels of a numeric
// axis sit where their values fall (a linear axis from 0 to 800 puts 0 and
// 50 close together), so it is the widest any two neighbours ask for.
func (f *Figure) dataWidth(p *plot.Plot, pn Panel) vg.Length {
	need := longestWord(p.X.Label.TextStyle, p.X.Label.Text)
	need = max(need, longestWord(p.Title.TextStyle, p.Title.Text)-axisRoom)
	ticks := labelled(p.X.Tick.Marker.Ticks(p.X.Min, p.X.Max))
	for i := 1; i < len(ticks); i++ {
		a, b := ticks[i-1], ticks[i]
		span := vg.Length(p.X.Norm(b.Value) - p.X.Norm(a.Value))
		if span <= 0 {
			continue
		}
		need = max(need, labelRoom(p, a, b)/span)
	}
	return need
}

// fit makes p's text fit a data area of w by h: axis and panel titles are
// wrapped at spaces, and x tick labels that would still run into each
// other keep every k-th label only (the ticks stay).
func fit(p *plot.Plot, w, h vg.Length) {
	p.X.Label.Text = wrapText(p.X.Label.Text, p.X.Label.TextStyle, w)
	p.Y.Label.Text = wrapText(p.Y.Label.Text, p.Y.Label.TextStyle, h)
	p.Title.Text = wrapText(p.Title.Text, p.Title.TextStyle, w+axisRoom/2)
	ticks := labelled(p.X.Tick.Marker.Ticks(p.X.Min, p.X.Max))
	for k := 1; k < len(ticks); k++ {
		if fitsEvery(p, ticks, k, w) {
			if k > 1 {
				p.X.Tick.Marker = everyKth{p.X.Tick.Marker, k}
			}
			return
		}
	}
	p.X.Tick.Marker = everyKth{p.X.Tick.Marker, len(ticks)}
}

// fitsEvery reports whether every k-th of ticks fits a data width w.
func fitsEvery(p *plot.Plot, ticks []plot.Tick, k int, w vg.Length) bool {
	for i := k; i < len(ticks); i += k {
		a, b := ticks[i-k], ticks[i]
		if vg.Length(p.X.Norm(b.Value)-p.X.Norm(a.Value))*w < labelRoom(p, a, b) {
			return false
		}
	}
	return true
}

// labelRoom is the distance two neighbouring tick labels need between
// their ticks, which sit under the labels' middles.
func labelRoom(p *plot.Plot, a, b plot.Tick) vg.Length {
	return (p.X.Tick.Label.Width(a.Label)+p.X.Tick.Label.Width(b.Label))/2 + tickGap
}

// labelled keeps the ticks that carry a label.
func labelled(ts []plot.Tick) []plot.Tick {
	var out []plot.Tick
	for _, t := range ts {
		if t.Label != "" {
			out = append(out, t)
		}
	}
	return out
}

// everyKth labels every k-th labelled tick of another marker.
type everyKth struct {
	plot.Ticker
	k int
}

func (e everyKth) Ticks(lo, hi float64) []plot.Tick {
	// A marker may hand out its own slice (plot.ConstantTicks does).
	ts := slices.Clone(e.Ticker.Ticks(lo, hi))
	n := 0
	for i := range ts {
		if ts[i].Label == "" {
			continue
		}
		if n%e.k != 0 {
			ts[i].Label = ""
		}
		n++
	}
	return ts
}

func longestWord(sty draw.TextStyle, s string) vg.Length {
	var w vg.Length
	for _, word := range strings.Fields(s) {
		w = max(w, sty.Width(word))
	}
	return w
}

// wrapText breaks s at spaces into lines no wider than w where it can.
func wrapText(s string, sty draw.TextStyle, w vg.Length) string {
	return strings.Join(wrapLine(s, sty, w), "\n")
}

func wrapLine(s string, sty draw.TextStyle, w vg.Length) []string {
	var lines []string
	line := ""
	for _, word := range strings.Fields(s) {
		switch {
		case line == "":
			line = word
		case sty.Width(line+" "+word) <= w:
			line += " " + word
		default:
			lines = append(lines, line)
			line = word
		}
	}
	if line != "" {
		lines = append(lines, line)
	}
	return lines
}

// wrapWidth breaks each note into lines no wider than w.
func wrapWidth(notes []string, sty draw.TextStyle, w vg.Length) []string {
	var out []string
	for _, n := range notes {
		out = append(out, wrapLine(n, sty, w)...)
	}
	return out
}

// legendEntry is one series in the figure's legend; style picks its
// colour and marker.
type legendEntry struct {
	label string
	style int
}

// legendEntries are the figure's series in order of first appearance.
func (f *Figure) legendEntries() []legendEntry {
	var out []legendEntry
	seen := map[string]bool{}
	for _, pn := range f.Panels {
		for _, s := range pn.Series {
			if !seen[s.Label] {
				seen[s.Label] = true
				out = append(out, legendEntry{label: s.Label, style: len(out)})
			}
		}
	}
	return out
}

const (
	legendSample = vg.Length(18) // a line and marker, or a bar swatch
	legendSep    = vg.Length(4)  // between sample and label
	legendGap    = vg.Length(14) // between entries
)

func legendStyle() draw.TextStyle {
	return draw.TextStyle{Color: color.Black, Font: font.From(plot.DefaultFont, 9), XAlign: draw.XLeft, YAlign: draw.YCenter, Handler: plot.DefaultTextHandler}
}

func entryWidth(e legendEntry) vg.Length {
	return legendSample + legendSep + legendStyle().Width(e.label)
}

// legendRows packs the entries into rows no wider than w.
func legendRows(entries []legendEntry, w vg.Length) [][]legendEntry {
	var rows [][]legendEntry
	var row []legendEntry
	var used vg.Length
	for _, e := range entries {
		ew := entryWidth(e)
		if len(row) > 0 && used+legendGap+ew > w {
			rows, row, used = append(rows, row), nil, 0
		}
		if len(row) > 0 {
			used += legendGap
		}
		row, used = append(row, e), used+ew
	}
	if len(row) > 0 {
		rows = append(rows, row)
	}
	return rows
}

// drawLegendRow draws one row of entries centred on (cx, cy).
func drawLegendRow(dc draw.Canvas, row []legendEntry, cx, cy vg.Length, kind string) {
	var total vg.Length
	for i, e := range row {
		if i > 0 {
			total += legendGap
		}
		total += entryWidth(e)
	}
	x := cx - total/2
	for _, e := range row {
		c := palette[e.style%len(palette)]
		if kind == Bars {
			h := vg.Length(7)
			dc.FillPolygon(c, []vg.Point{{X: x + 4, Y: cy - h/2}, {X: x + legendSample - 4, Y: cy - h/2},
				{X: x + legendSample - 4, Y: cy + h/2}, {X: x + 4, Y: cy + h/2}})
		} else {
			dc.StrokeLine2(draw.LineStyle{Color: c, Width: vg.Points(1.3)}, x, cy, x+legendSample, cy)
			dc.DrawGlyph(draw.GlyphStyle{Color: c, Radius: vg.Points(2.6), Shape: shapes[e.style%len(shapes)]}, vg.Point{X: x + legendSample/2, Y: cy})
		}
		dc.FillText(legendStyle(), vg.Point{X: x + legendSample + legendSep, Y: cy}, e.label)
		x += entryWidth(e) + legendGap
	}
}
