package experiments

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
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
	// own or one of the same configuration, or run for an earlier figure
	// of the same SweepFigures.
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
// result yet, in parallel, saving each result as it finishes so that an
// interrupted sweep (ctx cancelled) resumes where it stopped. A result
// file that does not parse stops the sweep before anything runs: it is
// reported, never silently run again or plotted. Failed runs are reported
// in their Outcome and, together, in the error. SweepFigures sweeps
// several figures at once.
func Sweep(ctx context.Context, s *Spec, points []Point, opt Options) ([]Outcome, error) {
	var sw Swept
	err := SweepFigures(ctx, []Figure{{Spec: s, Points: points}}, opt, func(_ int, got Swept) error {
		sw = got
		return nil
	})
	if err != nil {
		return nil, err
	}
	return sw.Outcomes, sw.Err
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
	// Clear erases the bar's line, RenderBlank draws it again.
	Clear() error
	RenderBlank() error
	// Exit leaves the bar as it is, unfinished.
	Exit() error
}

type noBar struct{}

func (noBar) Add(int) error      { return nil }
func (noBar) Clear() error       { return nil }
func (noBar) RenderBlank() error { return nil }
func (noBar) Exit() error        { return nil }

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

// Index maps outcomes by point for claims and plots: the point's
// replicates, in the order of outs.
func Index(outs []Outcome) map[pointKey][]Outcome {
	m := make(map[pointKey][]Outcome, len(outs))
	for _, o := range outs {
		m[o.key()] = append(m[o.key()], o)
	}
	return m
}
