package experiments

import (
	"fmt"
	"slices"

	"github.com/dmbench/dmbench/bench"
)

// Row is one point of a comparison.
type Row struct {
	Name  string
	A, B  string
	Ratio string
}

// Compare lines two result sets up by name and gives metric in each and
// B/A. A point in only one set shows "-" for the other.
func Compare(metricName string, a, b map[string]*bench.Result) ([]Row, error) {
	m, err := metricOf(metricName)
	if err != nil {
		return nil, err
	}
	names := map[string]bool{}
	for n := range a {
		names[n] = true
	}
	for n := range b {
		names[n] = true
	}
	sorted := make([]string, 0, len(names))
	for n := range names {
		sorted = append(sorted, n)
	}
	slices.Sort(sorted)
	var rows []Row
	for _, n := range sorted {
		r := Row{Name: n, A: "-", B: "-", Ratio: "-"}
		var va, vb float64
		var okA, okB bool
		if res, ok := a[n]; ok {
			va, okA = m(res)
		}
		if res, ok := b[n]; ok {
			vb, okB = m(res)
		}
		if okA {
			r.A = fmt.Sprintf("%.4g", va)
		}
		if okB {
			r.B = fmt.Sprintf("%.4g", vb)
		}
		if okA && okB && va != 0 {
			r.Ratio = fmt.Sprintf("%.3f", vb/va)
		}
		rows = append(rows, r)
	}
	return rows, nil
}
