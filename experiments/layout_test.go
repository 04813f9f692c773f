package experiments

import (
	"math"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/dmbench/dmbench/plots"
)

// Every figure of the catalog, drawn from synthetic numbers of the sizes
// runs give, is legible: no text leaves the canvas or runs into other
// text (tick labels, axis and panel titles, the legend, the notes).
// DMBENCH_PLOT_DIR=dir keeps the PNGs to look at.
func TestEveryFigureIsLegible(t *testing.T) {
	ids, err := IDs()
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		s, err := Lookup(id)
		if err != nil {
			t.Fatal(err)
		}
		if s.Plot == "table" {
			continue
		}
		t.Run(id, func(t *testing.T) {
			for _, scale := range []string{"small", "default"} {
				f, err := syntheticFigure(s, scale)
				if err != nil {
					t.Fatal(err)
				}
				if err := f.CheckLayout(); err != nil {
					t.Errorf("scale %s: %v", scale, err)
				}
				if dir := os.Getenv("DMBENCH_PLOT_DIR"); dir != "" && scale == "default" {
					base := filepath.Join(dir, filepath.FromSlash(id))
					if err := os.MkdirAll(filepath.Dir(base), 0o755); err != nil {
						t.Fatal(err)
					}
					if err := f.Save(base); err != nil {
						t.Fatal(err)
					}
				}
			}
		})
	}
}

// syntheticFigure is the figure a reproduction of s at scale would draw,
// every series present, with numbers whose size varies by panel (0.1 to
// 1000) as different metrics' do.
func syntheticFigure(s *Spec, scale string) (*plots.Figure, error) {
	points, err := s.Expand(scale)
	if err != nil {
		return nil, err
	}
	outs := make([]Outcome, len(points))
	for i, p := range points {
		outs[i] = Outcome{Point: p}
	}
	r := NewReport(s, scale, outs)
	f := r.Figure()
	xs := r.xs()
	for pi := range f.Panels {
		pn := &f.Panels[pi]
		size := math.Pow(10, float64(pi%5)-1)
		for si, se := range s.Series {
			series := plots.Series{Label: se.Label}
			switch {
			case s.X.Name == "time":
				for ms := range 40 {
					series.X = append(series.X, float64(ms)/4)
					series.Y = append(series.Y, size*float64(3+si)*(1+0.1*float64(ms%7)))
				}
			case f.Kind == plots.Bars:
				for j := range pn.Categories {
					series.Y = append(series.Y, size*float64(1+si)*float64(1+j))
				}
			default:
				for j, x := range xs {
					v, err := strconv.ParseFloat(x, 64)
					if err != nil {
						return nil, err
					}
					series.X = append(series.X, v)
					series.Y = append(series.Y, size*float64(1+si)*float64(1+j))
				}
			}
			pn.Series = append(pn.Series, series)
		}
	}
	return f, nil
}
