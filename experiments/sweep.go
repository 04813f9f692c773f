package experiments

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/dmbench/dmbench/bench"
)

// Outcome is a point and what became of it.
type Outcome struct {
	Point
	Result *bench.Result
	Err    error
	// Reused marks a result read back from an earlier sweep, the point's
	// own or one of the same configuration.
	Reused bool
}

// Options control a sweep.
type Options struct {
	// Dir is the results root; runs go to Dir/<paper>/<figure>.runs/<scale>.
	Dir   string
	Scale string
	// Jobs is how many runs go at once (one core each); 0 means one per
	// core.
	Jobs int
	// Progress, when not nil, shows a progress bar with an ETA.
	Progress io.Writer
	// Shard, when set, runs only the shard's share of the runs (see
	// Shard); the other points stay without a result.
	Shard Shard
}

// Shard is the I-th (1 <= I <= N) of N disjoint shares of a figure's
// runs, so that N machines (a Slurm job array) sweep a figure together:
// each writes its share's results, the result folders are copied into
// one, and a sweep without a shard then finds every run saved. The zero
// Shard is the whole figure.
//
// A figure's distinct run configurations, in the order its points
// expand, are dealt round-robin: configuration k goes to shard k mod N.
// The deal depends on the spec and scale alone, never on which results
// a machine already holds, so shards are disjoint and together cover
// every run; points that share a configuration share its shard.
type Shard struct{ I, N int }

// ParseShard reads "I/N".
func ParseShard(s string) (Shard, error) {
	var sh Shard
	if _, err := fmt.Sscanf(s, "%d/%d", &sh.I, &sh.N); err != nil || fmt.Sprintf("%d/%d", sh.I, sh.N) != s {
		return Shard{}, fmt.Errorf("shard %q: want I/N, as 3/8, the I-th of N shares", s)
	}
	if sh.N < 1 || sh.I < 1 || sh.I > sh.N {
		return Shard{}, fmt.Errorf("shard %q: want 1 <= I <= N", s)
	}
	return sh, nil
}

func (sh Shard) String() string { return fmt.Sprintf("%d/%d", sh.I, sh.N) }

// whole reports a zero shard, or 1/1: every run.
func (sh Shard) whole() bool { return sh.N <= 1 }

// owns lists, per point, whether the shard runs it.
func (sh Shard) owns(points []Point) []bool {
	own := make([]bool, len(points))
	deal := map[string]int{}
	for i, p := range points {
		k, ok := deal[p.Hash]
		if !ok {
			k = len(deal)
			deal[p.Hash] = k
		}
		own[i] = sh.whole() || k%sh.N == sh.I-1
	}
	return own
}

// RunsDir is where a figure's runs at a scale are kept.
func RunsDir(dir string, s *Spec, scale string) string {
	return filepath.Join(dir, filepath.FromSlash(s.ID)+".runs", scale)
}

// Sweep runs every point that is not missing, has its inputs and has no
// result yet, in
// parallel, saving each result as it finishes so that an interrupted sweep
// (ctx cancelled) resumes where it stopped. A result file that does not
// parse stops the sweep before anything runs: it is reported, never
// silently run again or plotted. Failed runs are reported in their
// Outcome and, together, in the error.
func Sweep(ctx context.Context, s *Spec, points []Point, opt Options) ([]Outcome, error) {
	dir := RunsDir(opt.Dir, s, opt.Scale)
	out, err := Collect(s, points, opt)
	if err != nil {
		return nil, err
	}
	// One run per configuration: the points of a derived axis, or of
	// panels that plot other metrics of the same runs, share it, also
	// with a result an earlier sweep saved.
	saved := map[string]int{}
	for i, o := range out {
		if _, dup := saved[o.Hash]; o.Result != nil && !dup {
			saved[o.Hash] = i
		}
	}
	var pending []int
	first := map[string]int{}
	own := opt.Shard.owns(points)
	var elsewhere map[string]string // read on the first point that needs it
	for i, o := range out {
		if o.Missing != "" || o.Result != nil || o.NeedsInput != "" || !own[i] {
			continue
		}
		if _, ok := saved[o.Hash]; !ok {
			if elsewhere == nil {
				elsewhere = otherRuns(opt.Dir, opt.Scale)
			}
			if path, ok := elsewhere[o.Hash]; ok {
				if r := reuse(path, &o.Config); r != nil {
					out[i].Result = r
					saved[o.Hash] = i
				}
			}
		}
		if j, ok := saved[o.Hash]; ok {
			out[i].Result, out[i].Reused = out[j].Result, true
			if err := save(filepath.Join(dir, o.ID+".json"), out[i].Result); err != nil {
				return nil, err
			}
			continue
		}
		if _, dup := first[o.Hash]; !dup {
			first[o.Hash] = i
			pending = append(pending, i)
		}
	}
	jobs := opt.Jobs
	if jobs <= 0 {
		jobs = runtime.NumCPU()
	}
	bar := newBar(opt.Progress, len(pending), s.ID)
	work := make(chan int)
	var wg sync.WaitGroup
	for range min(jobs, max(len(pending), 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				o := &out[i]
				o.Result, o.Err = bench.Run(o.Config)
				if o.Err == nil {
					o.Err = save(filepath.Join(dir, o.ID+".json"), o.Result)
				}
				if o.Err != nil {
					o.Result = nil
				}
				bar.Add(1)
			}
		}()
	}
feed:
	for _, i := range pending {
		select {
		case work <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(work)
	wg.Wait()
	bar.Finish()
	for i := range out {
		o := &out[i]
		if j, ok := first[o.Hash]; ok && j != i && o.Result == nil && o.Err == nil {
			o.Result, o.Err = out[j].Result, out[j].Err
			if o.Result != nil {
				o.Err = save(filepath.Join(dir, o.ID+".json"), o.Result)
			}
		}
	}
	var errs []error
	for _, o := range out {
		if o.Err != nil {
			errs = append(errs, fmt.Errorf("%s: %s %s x=%s: %w", s.ID, o.Panel, o.Series, o.XLabel(), o.Err))
		}
	}
	if err := ctx.Err(); err != nil {
		errs = append(errs, fmt.Errorf("%s: interrupted; finished runs are kept in %s and the next sweep resumes: %w", s.ID, dir, err))
	}
	return out, errors.Join(errs...)
}

// Collect reads the results a sweep has already saved, running nothing:
// points without a result stay empty. A result file that does not parse
// is an error naming it.
func Collect(s *Spec, points []Point, opt Options) ([]Outcome, error) {
	dir := RunsDir(opt.Dir, s, opt.Scale)
	out := make([]Outcome, len(points))
	for i, p := range points {
		out[i].Point = p
		if p.Missing != "" {
			continue
		}
		path := filepath.Join(dir, p.ID+".json")
		switch r, err := bench.ReadResult(path); {
		case err == nil:
			out[i].Result, out[i].Reused = r, true
		case errors.Is(err, os.ErrNotExist):
		default:
			return nil, fmt.Errorf("broken results file %s: %w (delete it to run that point again)", path, err)
		}
	}
	return out, nil
}

func save(path string, r *bench.Result) error {
	b, err := r.JSON()
	if err != nil {
		return err
	}
	return bench.WriteFileAtomic(path, b)
}

// bar is a progress bar, or nothing when there is no writer.
type bar interface {
	Add(int) error
	Finish() error
}

type noBar struct{}

func (noBar) Add(int) error { return nil }
func (noBar) Finish() error { return nil }

func newBar(w io.Writer, n int, id string) bar {
	if w == nil || n == 0 {
		return noBar{}
	}
	return progressbar.NewOptions(n,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription(id),
		progressbar.OptionShowCount(),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionShowElapsedTimeOnFinish(),
		progressbar.OptionThrottle(500*time.Millisecond),
		progressbar.OptionOnCompletion(func() { fmt.Fprintln(w) }),
	)
}

// Index maps outcomes by point for claims and plots.
func Index(outs []Outcome) map[pointKey]Outcome {
	m := make(map[pointKey]Outcome, len(outs))
	for _, o := range outs {
		m[o.key()] = o
	}
	return m
}
