package experiments

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dmbench/dmbench/bench"
)

// poolSpec is tinySpec, without its claims, as figure test/<id> with x
// (threads) values xs, as in "[1, 4]".
func poolSpec(t *testing.T, id, xs string) Figure {
	t.Helper()
	spec := strings.NewReplacer("id: test/tiny", "id: test/"+id, "values: [1, 4]", "values: "+xs).Replace(tinySpec)
	spec = spec[:strings.Index(spec, "claims:")]
	s, err := Parse(id+".yaml", []byte(spec))
	if err != nil {
		t.Fatal(err)
	}
	points, err := s.Expand("small")
	if err != nil {
		t.Fatal(err)
	}
	return Figure{Spec: s, Points: points}
}

// countRuns makes the sweeps of the test call each before a run and
// count the runs; each may block or fail the run.
func countRuns(t *testing.T, each func(c bench.Config) error) *int {
	t.Helper()
	var mu sync.Mutex
	n := new(int)
	t.Cleanup(func() { runBench = bench.RunWarm })
	runBench = func(c bench.Config, w *bench.Warm) (*bench.Result, error) {
		mu.Lock()
		*n++
		mu.Unlock()
		if each != nil {
			if err := each(c); err != nil {
				return nil, err
			}
		}
		return bench.RunWarm(c, w)
	}
	return n
}

// sweepAll sweeps figs in one pool and returns what became of each, in
// the order reported.
func sweepAll(ctx context.Context, t *testing.T, figs []Figure, opt Options) ([]int, []Swept) {
	t.Helper()
	var order []int
	var swept []Swept
	err := SweepFigures(ctx, figs, opt, func(i int, sw Swept) error {
		order = append(order, i)
		swept = append(swept, sw)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return order, swept
}

// savedRuns reads every result saved under root, by path, without the
// wall-clock fields.
func savedRuns(t *testing.T, root string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".json") {
			return err
		}
		r, err := bench.ReadResult(path)
		if err != nil {
			return err
		}
		r.WallS, r.LoadWallS, r.WarmupWallS = 0, 0, 0
		b, err := r.JSON()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		files[rel] = b
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// Two figures of the same runs, swept at once: each configuration runs
// once, and both figures get its result, each in its own runs folder.
func TestPoolRunsSharedConfigurationOnce(t *testing.T) {
	runs := countRuns(t, nil)
	figs := []Figure{poolSpec(t, "first", "[1, 4]"), poolSpec(t, "second", "[1, 4]")}
	dir := t.TempDir()
	order, swept := sweepAll(context.Background(), t, figs, Options{Dir: dir, Scale: "small", Jobs: 2})
	if *runs != 2 {
		t.Errorf("%d runs, want 2: one per configuration", *runs)
	}
	if len(order) != 2 {
		t.Fatalf("reported figures %v, want both", order)
	}
	for i, o := range swept[1].Outcomes {
		if o.Missing != "" {
			continue
		}
		first := swept[0].Outcomes[i]
		if o.Result == nil || o.Result != first.Result || !o.Reused || first.Reused {
			t.Errorf("%s: second figure's result %p (reused %v), first's %p (reused %v): want the first's run, shared",
				o.ID, o.Result, o.Reused, first.Result, first.Reused)
		}
		if _, err := os.Stat(filepath.Join(RunsDir(dir, figs[1].Spec, "small"), o.ID+".json")); err != nil {
			t.Errorf("%s: no copy in the second figure's runs folder: %v", o.ID, err)
		}
	}
	if swept[1].RunTime != 0 || swept[0].RunTime == 0 {
		t.Errorf("run times %v, %v: the first figure ran both runs", swept[0].RunTime, swept[1].RunTime)
	}
}

// Figures that share some runs, swept in one pool, save what sweeping
// them one after another saves, bit for bit but for wall-clock fields.
func TestPoolEqualsSequentialSweeps(t *testing.T) {
	figs := []Figure{poolSpec(t, "a", "[1, 4]"), poolSpec(t, "b", "[1, 2, 4]"), poolSpec(t, "c", "[2, 3]")}
	seq := t.TempDir()
	for _, f := range figs {
		if _, err := Sweep(context.Background(), f.Spec, f.Points, Options{Dir: seq, Scale: "small", Jobs: 2}); err != nil {
			t.Fatal(err)
		}
	}
	runs := countRuns(t, nil)
	pooled := t.TempDir()
	order, _ := sweepAll(context.Background(), t, figs, Options{Dir: pooled, Scale: "small", Jobs: 2})
	if fmt.Sprint(order) != "[0 1 2]" {
		t.Errorf("reported %v, want [0 1 2]", order)
	}
	if *runs != 4 {
		t.Errorf("%d runs, want 4: threads 1, 2, 3, 4", *runs)
	}
	want, got := savedRuns(t, seq), savedRuns(t, pooled)
	if len(want) != 7 || len(got) != len(want) {
		t.Errorf("pooled sweep saved %d results, sequential sweeps %d, want 7", len(got), len(want))
	}
	for name, b := range want {
		if !bytes.Equal(got[name], b) {
			t.Errorf("%s differs between the pooled and the sequential sweeps", name)
		}
	}
}

// Figures are reported in order, each as soon as its runs are done while
// the pool runs on: figure 1's run finishes before figure 0's, and
// figure 2's run goes on only once figure 0 has been reported.
func TestPoolReportsInFigureOrder(t *testing.T) {
	figs := []Figure{poolSpec(t, "a", "[1]"), poolSpec(t, "b", "[2]"), poolSpec(t, "c", "[3]")}
	bDone, aReported := make(chan struct{}), make(chan struct{})
	wait := func(ch chan struct{}, what string) error {
		select {
		case <-ch:
			return nil
		case <-time.After(10 * time.Second):
			return errors.New("waited in vain for " + what)
		}
	}
	var finished []int
	var mu sync.Mutex
	countRuns(t, func(c bench.Config) error {
		switch c.Threads {
		case 1:
			if err := wait(bDone, "figure b's run"); err != nil {
				return err
			}
		case 2:
			defer close(bDone)
		case 3:
			if err := wait(aReported, "figure a's report"); err != nil {
				return err
			}
		}
		mu.Lock()
		finished = append(finished, c.Threads)
		mu.Unlock()
		return nil
	})
	var order []int
	err := SweepFigures(context.Background(), figs, Options{Dir: t.TempDir(), Scale: "small", Jobs: 2}, func(i int, sw Swept) error {
		if sw.Err != nil {
			t.Errorf("figure %d: %v", i, sw.Err)
		}
		if i == 0 {
			close(aReported)
		}
		order = append(order, i)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(order) != "[0 1 2]" {
		t.Errorf("reported %v, want [0 1 2]", order)
	}
	if fmt.Sprint(finished) != "[2 1 3]" {
		t.Errorf("runs of threads %v, want [2 1 3]", finished)
	}
}

// An interrupted pool starts no more runs, keeps the finished ones,
// reports up to the figure it stopped in, and resumes from there.
func TestPoolInterruptKeepsFinishedRuns(t *testing.T) {
	figs := []Figure{poolSpec(t, "a", "[1, 2, 4]"), poolSpec(t, "b", "[3]")}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	runs := countRuns(t, func(bench.Config) error {
		cancel() // the first run finishes; no other starts
		return nil
	})
	dir := t.TempDir()
	opt := Options{Dir: dir, Scale: "small", Jobs: 1}
	order, swept := sweepAll(ctx, t, figs, opt)
	if *runs != 1 || fmt.Sprint(order) != "[0]" {
		t.Fatalf("%d runs, reported %v: want 1 run, figure 0 reported", *runs, order)
	}
	if err := swept[0].Err; !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "test/a: interrupted; finished runs are kept in") {
		t.Errorf("error %v, want test/a interrupted", err)
	}
	if !swept[0].Done.IsZero() {
		t.Errorf("interrupted figure done at %v", swept[0].Done)
	}
	var done int
	for _, o := range swept[0].Outcomes {
		if o.Result != nil {
			done++
		}
	}
	if saved := len(savedRuns(t, dir)); done != 1 || saved != 1 {
		t.Errorf("%d points with a result, %d saved: want the finished run's", done, saved)
	}

	runs = countRuns(t, nil)
	order, swept = sweepAll(context.Background(), t, figs, opt)
	if *runs != 3 || fmt.Sprint(order) != "[0 1]" {
		t.Errorf("resumed: %d runs, reported %v: want the 3 others, both figures", *runs, order)
	}
	for _, sw := range swept {
		if sw.Err != nil {
			t.Errorf("resumed: %v", sw.Err)
		}
	}
}
