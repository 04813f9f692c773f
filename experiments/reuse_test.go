package experiments

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dmbench/dmbench/bench"
)

// A figure whose point has the configuration of a run another figure saved
// takes that result instead of running it, and keeps its own copy; a saved
// run whose recorded configuration differs under the same short hash is
// not taken.
func TestSweepReusesOtherFiguresRuns(t *testing.T) {
	first, err := Parse("tiny.yaml", []byte(tinySpec))
	if err != nil {
		t.Fatal(err)
	}
	second, err := Parse("other.yaml", []byte(strings.Replace(tinySpec, "id: test/tiny", "id: test/other", 1)))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	opt := Options{Dir: dir, Scale: "small", Jobs: 1}
	sweep := func(s *Spec) []Outcome {
		t.Helper()
		points, err := s.Expand("small")
		if err != nil {
			t.Fatal(err)
		}
		outs, err := Sweep(context.Background(), s, points, opt)
		if err != nil {
			t.Fatal(err)
		}
		return outs
	}
	ran := sweep(first)
	for _, o := range sweep(second) {
		if o.Missing != "" {
			continue
		}
		if !o.Reused || o.Result == nil {
			t.Fatalf("%s: not reused from test/tiny's runs", o.ID)
		}
		if _, err := os.Stat(filepath.Join(RunsDir(dir, second, "small"), o.ID+".json")); err != nil {
			t.Errorf("%s: no copy in its own runs folder: %v", o.ID, err)
		}
	}

	// A result of another configuration filed under the same hash.
	third, err := Parse("third.yaml", []byte(strings.Replace(tinySpec, "id: test/tiny", "id: test/third", 1)))
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range ran {
		if o.Missing != "" {
			continue
		}
		r := *o.Result
		r.Config.Threads++
		b, err := r.JSON()
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range []*Spec{first, second} {
			if err := bench.WriteFileAtomic(filepath.Join(RunsDir(dir, s, "small"), o.ID+".json"), b); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, o := range sweep(third) {
		if o.Missing == "" && o.Reused {
			t.Errorf("%s: reused a run of another configuration", o.ID)
		}
	}
}
