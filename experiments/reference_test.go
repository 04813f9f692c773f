package experiments

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	_ "github.com/dmbench/dmbench/indexes/all"
)

// The golden reference results: a fixed small-scale subset of three
// figures, committed under results/reference. Simulated runs are
// deterministic, so any change in a CSV is a change of the model or of an
// index; such a change updates the reference in the same commit, with the
// claims it moves in the commit message:
//
//	DMBENCH_UPDATE_REFERENCE=1 go test ./experiments -run TestReferenceResults
//
// (make reference does the same).
var referenceFigures = []string{"dex/fig6", "dmtree/fig11", "rftree/fig6"}

const referenceDir = "../results/reference"

// referencePoints is the subset of a figure the reference holds: the
// points at the figure's smallest x of the small scale, every series and
// panel, so that each index of the figure is covered once per workload.
func referencePoints(points []Point) []Point {
	if len(points) == 0 {
		return nil
	}
	least := points[0].X
	for _, p := range points {
		least = min(least, p.X)
	}
	return slices.DeleteFunc(slices.Clone(points), func(p Point) bool { return p.X != least })
}

func TestReferenceResults(t *testing.T) {
	if testing.Short() {
		t.Skip("the reference runs take about a minute; -short skips them")
	}
	update := os.Getenv("DMBENCH_UPDATE_REFERENCE") != ""
	for _, id := range referenceFigures {
		t.Run(strings.ReplaceAll(id, "/", "-"), func(t *testing.T) {
			s, err := Lookup(id)
			if err != nil {
				t.Fatal(err)
			}
			points, err := s.Expand("small")
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			outs, err := Sweep(context.Background(), s, referencePoints(points), Options{Dir: dir, Scale: "small"})
			if err != nil {
				t.Fatal(err)
			}
			got := filepath.Join(dir, "runs.csv")
			if err := NewReport(s, "small", outs).writeRuns(got); err != nil {
				t.Fatal(err)
			}
			rows, err := deterministicRows(got)
			if err != nil {
				t.Fatal(err)
			}
			want := filepath.Join(referenceDir, filepath.FromSlash(id)+".csv")
			if update {
				if err := writeRows(want, rows); err != nil {
					t.Fatal(err)
				}
				return
			}
			ref, err := readRows(want)
			if err != nil {
				t.Fatalf("%v (DMBENCH_UPDATE_REFERENCE=1 writes it)", err)
			}
			if diff := diffRows(ref, rows); diff != "" {
				t.Errorf("%s differs from %s; a model or index change must update the reference in the same commit (DMBENCH_UPDATE_REFERENCE=1):\n%s", id, want, diff)
			}
		})
	}
}

// deterministicRows reads a runs CSV without its wall-time column, the one
// field a simulated run does not determine.
func deterministicRows(path string) ([][]string, error) {
	rows, err := readRows(path)
	if err != nil {
		return nil, err
	}
	wall := slices.Index(rows[0], "wall_s")
	if wall < 0 {
		return nil, fmt.Errorf("%s: no wall_s column", path)
	}
	for i, r := range rows {
		if wall < len(r) {
			rows[i] = slices.Delete(r, wall, wall+1)
		}
	}
	return rows, nil
}

func readRows(path string) ([][]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	r := csv.NewReader(bytes.NewReader(b))
	r.FieldsPerRecord = -1
	rows, err := r.ReadAll()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("%s: empty", path)
	}
	return rows, nil
}

func writeRows(path string, rows [][]string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	w.WriteAll(rows)
	if err := w.Error(); err != nil {
		return err
	}
	return os.WriteFile(path, b.Bytes(), 0o644)
}

// diffRows names each differing row by its panel, series and x, and each
// differing field by its column, reference value first.
func diffRows(want, got [][]string) string {
	var b strings.Builder
	head := want[0]
	if !slices.Equal(head, got[0]) {
		fmt.Fprintf(&b, "columns: reference %v\n     now %v\n", head, got[0])
		return b.String()
	}
	if len(want) != len(got) {
		fmt.Fprintf(&b, "%d rows in the reference, %d now\n", len(want)-1, len(got)-1)
	}
	for i := 1; i < min(len(want), len(got)); i++ {
		if slices.Equal(want[i], got[i]) {
			continue
		}
		fmt.Fprintf(&b, "%s\n", strings.Join(got[i][2:5], " / "))
		for j := range max(len(want[i]), len(got[i])) {
			w, g := field(want[i], j), field(got[i], j)
			if w != g {
				fmt.Fprintf(&b, "  %s: %s -> %s\n", field(head, j), w, g)
			}
		}
	}
	return b.String()
}

func field(r []string, j int) string {
	if j < len(r) {
		return r[j]
	}
	return ""
}
