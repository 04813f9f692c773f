package plots

import (
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/plot/vg"
)

func TestSaveWritesEveryFormat(t *testing.T) {
	dir := t.TempDir()
	if d := os.Getenv("DMBENCH_PLOT_DIR"); d != "" {
		dir = d // keep the files to look at them
	}
	figs := map[string]*Figure{
		"lines": {
			Title: "Throughput under skewed workloads", XLabel: "Compute threads", YLabel: "Throughput (Mops/s)", Kind: Lines,
			Notes: []string{"scale default: 1 M records", "missing: SMART (index not implemented yet)"},
			Panels: []Panel{
				{Title: "(a) Read-only", Series: []Series{
					{Label: "DEX", X: []float64{2, 36, 72, 144}, Y: []float64{1, 10, 20, 38},
						Lo: []float64{0.8, 9, 17, 35}, Hi: []float64{1.1, 12, 21, 44}},
					{Label: "Sherman", X: []float64{2, 36, 72, 144}, Y: []float64{0.5, 4, 7, math.NaN()},
						Lo: []float64{0.5, 3, 6, math.NaN()}, Hi: []float64{0.6, 5, 8, math.NaN()}},
				}},
				{Title: "(b) Read-intensive", Series: []Series{
					{Label: "DEX", X: []float64{2, 36, 72, 144}, Y: []float64{1, 9, 18, 30}},
					{Label: "Sherman", X: []float64{2, 36, 72, 144}, Y: []float64{0.4, 3, 6, 9}},
				}},
			},
		},
		"bars": {
			Title: "YCSB", YLabel: "Throughput (Mops/s)", Kind: Bars, LogY: true,
			Panels: []Panel{{Title: "Zipfian", Categories: []string{"A", "B", "C"}, Series: []Series{
				{Label: "DMTree", Y: []float64{30, 40, 50}, Lo: []float64{25, 40, 45}, Hi: []float64{33, 40, 60}},
				{Label: "Sherman", Y: []float64{3, 4, math.NaN()}},
			}}},
		},
	}
	for name, f := range figs {
		base := filepath.Join(dir, name)
		if err := f.Save(base); err != nil {
			t.Fatal(err)
		}
		for _, ext := range []string{"pdf", "svg", "png"} {
			st, err := os.Stat(base + "." + ext)
			if err != nil || st.Size() < 1000 {
				t.Errorf("%s.%s: %v", base, ext, err)
			}
		}
	}
	// A log-scale panel without data (every run of it failed), or with
	// one point (an interrupted sweep), still draws.
	emptyLog := &Figure{Title: "no data", Kind: Lines, LogY: true, Panels: []Panel{
		{Title: "empty"}, {Title: "zeros", Series: []Series{{Label: "x", X: []float64{1, 2}, Y: []float64{0, math.NaN()}}}},
		{Title: "one point", Series: []Series{{Label: "x", X: []float64{1, 2}, Y: []float64{3, math.NaN()}}}},
	}}
	if err := emptyLog.Save(filepath.Join(dir, "emptylog")); err != nil {
		t.Errorf("log figure with empty panels: %v", err)
	}
	if err := (&Figure{Kind: Lines}).Save(filepath.Join(dir, "empty")); err == nil {
		t.Error("a figure without panels saved")
	}
}

// The axes hold a series' whiskers, not only its means.
func TestWhiskersWidenTheAxis(t *testing.T) {
	for _, kind := range []string{Lines, Bars} {
		f := &Figure{Kind: kind, Panels: []Panel{{Title: "p", Categories: []string{"a", "b"}, Series: []Series{
			{Label: "s", X: []float64{1, 2}, Y: []float64{10, 12}, Lo: []float64{5, 11}, Hi: []float64{30, 13}},
		}}}}
		ps, err := f.panels()
		if err != nil {
			t.Fatal(err)
		}
		if max := ps[0].Y.Max; max < 30 {
			t.Errorf("%s: y axis ends at %g, below the highest whisker (30)", kind, max)
		}
	}
}

func TestLabelsAndNotesFit(t *testing.T) {
	got := shortLabels([]string{"dmtree-ycsb-a", "dmtree-ycsb-b", "dmtree-ycsb-c"})
	if got[0] != "a" || got[2] != "c" {
		t.Errorf("shortLabels = %v, want a, b, c", got)
	}
	if got := shortLabels([]string{"p50", "p99"}); got[0] != "p50" {
		t.Errorf("labels without a separated prefix must stay whole: %v", got)
	}
	sty := noteStyle()
	lines := wrapWidth([]string{strings.Repeat("word ", 70)}, sty, 5*vg.Inch)
	for _, l := range lines {
		if w := sty.Width(l); w > 5*vg.Inch {
			t.Errorf("note line %q is %v wide, more than 5 in", l, w)
		}
	}
	if len(lines) < 3 {
		t.Errorf("350 characters wrapped into %d lines", len(lines))
	}
}

// Y tick labels carry no trailing zeros, whatever the range.
func TestPlainTicks(t *testing.T) {
	for _, r := range [][2]float64{{0, 55}, {0, 1.6}, {0, 120}, {0.5, 0.9}} {
		for _, tk := range (plainTicks{}).Ticks(r[0], r[1]) {
			if tk.Label == "" {
				continue
			}
			if strings.Contains(tk.Label, ".") && strings.HasSuffix(tk.Label, "0") {
				t.Errorf("range %v: tick label %q has a trailing zero", r, tk.Label)
			}
			if v, err := strconv.ParseFloat(tk.Label, 64); err != nil || math.Abs(v-tk.Value) > 1e-9*max(1, math.Abs(tk.Value)) {
				t.Errorf("range %v: tick %g labelled %q", r, tk.Value, tk.Label)
			}
		}
	}
}
