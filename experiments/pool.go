package experiments

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"sync"
	"time"

	"github.com/dmbench/dmbench/bench"
)

// Figure is a figure's points, one of the figures SweepFigures sweeps.
type Figure struct {
	Spec   *Spec
	Points []Point
}

// Swept is what became of a figure in SweepFigures.
type Swept struct {
	Outcomes []Outcome
	// Err joins the figure's failed runs and, when the sweep was
	// interrupted before the figure's runs were done, says so.
	Err error
	// RunTime sums the wall time of the runs the figure ran: how much of
	// the machine it took. A run that figures share counts for the first
	// of them, the one that ran it.
	RunTime time.Duration
	// Done is when the figure's last run finished (or, when it waited
	// for none, when the sweep had planned it); zero when interrupted.
	Done time.Time
}

// runBench runs a configuration, borrowing and lending warm-ups through
// a Warm; a variable so that tests can count and interrupt the runs of a
// sweep.
var runBench = bench.RunWarm

// SweepFigures sweeps figures, each as Sweep does, through one pool of
// opt.Jobs runs at once with no barrier between figures: runs start in
// figure order, then point order, so the next figure's runs start while
// the previous figure's last ones finish. A configuration that several
// figures share runs once, for the first of them; every figure keeps a
// copy of its result in its own runs folder.
//
// report is called on the calling goroutine for each figure, in figure
// order, as soon as all of its runs are done, while the pool runs on;
// an error it returns stops the sweep (the runs under way finish and are
// saved) and is returned. A results file that does not parse, in any of
// the figures, stops the sweep before anything runs. When ctx is
// cancelled no more runs start; the runs under way finish and are saved,
// and report is called up to the first figure whose runs are not all
// done, whose Err says that it was interrupted.
func SweepFigures(ctx context.Context, figs []Figure, opt Options, report func(i int, sw Swept) error) (err error) {
	// Runs that warm up alike copy the first one's per-node warm-up
	// (bench.Warm). One template at a time: the points of a series, which
	// share it, come in a row.
	p := &pool{opt: opt, figs: make([]poolFigure, len(figs)), runs: map[string]*run{}, warm: bench.NewWarm(1)}
	for k, f := range figs {
		if err := p.plan(k, f); err != nil {
			return err
		}
	}
	for _, r := range p.queue {
		p.warm.Expect(&r.config)
	}
	planned := time.Now()
	for k := range p.figs {
		p.figs[k].done = planned
	}

	// The runs stop on an interrupt (ctx) or when report fails (stop);
	// either way SweepFigures returns only once the runs under way are
	// saved, so nothing writes after it.
	runCtx, stop := context.WithCancel(ctx)
	finished := p.start(runCtx)
	defer func() {
		stop()
		for range finished {
		}
		err = errors.Join(err, p.warm.Close())
	}()

	desc := fmt.Sprintf("%d figures", len(figs))
	if len(figs) == 1 {
		desc = figs[0].Spec.ID
	}
	bar := newBar(opt.Progress, len(p.queue), desc)
	_ = bar.RenderBlank()
	for k := range p.figs {
		f := &p.figs[k]
		for f.left > 0 {
			r, ok := <-finished
			if !ok {
				break // interrupted: no more runs will finish
			}
			p.finish(r)
			_ = bar.Add(1)
		}
		sw := Swept{Outcomes: f.out, RunTime: f.runTime, Err: p.errs(ctx, k)}
		// Once reported, the figure's results may go.
		f.out = nil
		if f.left > 0 {
			// Interrupted: later figures wait for the next sweep.
			_ = bar.Exit()
			return report(k, sw)
		}
		sw.Done = f.done
		// The report goes to the terminal too: clear the bar's line
		// first, and draw the bar again below the report.
		_ = bar.Clear()
		if err := report(k, sw); err != nil {
			return err
		}
		_ = bar.RenderBlank()
	}
	return nil
}

// pool is the state of SweepFigures. Planning fills it before any run
// starts; then only the calling goroutine changes it, as runs finish.
type pool struct {
	opt  Options
	figs []poolFigure
	// runs maps the configuration key of each run the sweep makes to it.
	runs map[string]*run
	// queue holds the runs in the order they start.
	queue []*run
	// warm lends the warm-up of one run to the runs that warm up alike.
	warm *bench.Warm
	// elsewhere maps configuration hashes to results other sweeps saved
	// under opt.Dir (see otherRuns); read on the first point that needs
	// it.
	elsewhere map[string]string
}

// poolFigure is a figure of a pooled sweep.
type poolFigure struct {
	Figure
	out []Outcome
	// left counts the figure's points still waiting for their run.
	left    int
	runTime time.Duration
	// done is when the last of its runs that finished did, or when it
	// was planned.
	done time.Time
}

// run is one run of a configuration, for every point of the sweep's
// figures that has it.
type run struct {
	config bench.Config
	// owner is the figure that runs it, the first that needs it.
	owner int
	// targets are the points that take its result, the owner's first.
	targets []target
	result  *bench.Result
	err     error
	// wall is how long the run took; end is when it was done and saved.
	wall time.Duration
	end  time.Time
}

// target is a point that takes a run's result, and where it keeps it.
type target struct {
	fig, i int
	path   string
	// err is the error saving the point's copy of the result.
	err error
}

// plan reads figure k's saved results, copies the results other sweeps
// saved of its configurations, and queues its runs, joining the runs of
// earlier figures that have the same configuration.
func (p *pool) plan(k int, fig Figure) error {
	s := fig.Spec
	dir := RunsDir(p.opt.Dir, s, p.opt.Scale)
	out, err := Collect(s, fig.Points, p.opt)
	if err != nil {
		return err
	}
	f := &p.figs[k]
	f.Figure, f.out = fig, out
	// One run per configuration: the points of a derived axis, or of
	// panels that plot other metrics of the same runs, share it, also
	// with a result an earlier sweep saved.
	saved := map[string]int{}
	for i, o := range out {
		if _, dup := saved[o.Hash]; o.Result != nil && !dup {
			saved[o.Hash] = i
		}
	}
	first := map[string]*run{}
	own := p.opt.Shard.owns(fig.Points)
	for i, o := range out {
		if o.Missing != "" || o.Result != nil || o.NeedsInput != "" || !own[i] {
			continue
		}
		key := configKey(&o.Config)
		_, isSaved := saved[o.Hash]
		if !isSaved && first[o.Hash] == nil && p.runs[key] == nil {
			if r := p.reuse(&o); r != nil {
				out[i].Result = r
				saved[o.Hash] = i
				isSaved = true
			}
		}
		if isSaved {
			out[i].Result, out[i].Reused = out[saved[o.Hash]].Result, true
			if err := save(filepath.Join(dir, o.ID+".json"), out[i].Result); err != nil {
				return err
			}
			continue
		}
		r := first[o.Hash]
		if r == nil {
			r = p.runs[key]
		}
		if r == nil {
			r = &run{config: o.Config, owner: k}
			p.runs[key] = r
			p.queue = append(p.queue, r)
		}
		first[o.Hash] = r
		r.targets = append(r.targets, target{fig: k, i: i, path: filepath.Join(dir, o.ID+".json")})
		f.left++
	}
	return nil
}

// reuse is the result another sweep saved of o's configuration, or nil.
func (p *pool) reuse(o *Outcome) *bench.Result {
	if p.elsewhere == nil {
		p.elsewhere = otherRuns(p.opt.Dir, p.opt.Scale)
	}
	if path, ok := p.elsewhere[o.Hash]; ok {
		return reuse(path, &o.Config)
	}
	return nil
}

// start starts the pool: the queued runs go, in order, to opt.Jobs
// workers until ctx is cancelled. Each run comes out of the returned
// channel when it is done and saved; the channel is closed when the
// workers have stopped. It holds every run, so that a worker never waits
// for the calling goroutine to draw a figure.
func (p *pool) start(ctx context.Context) <-chan *run {
	jobs := p.opt.Jobs
	if jobs <= 0 {
		jobs = runtime.NumCPU()
	}
	work := make(chan *run)
	finished := make(chan *run, len(p.queue))
	go func() {
		defer close(work)
		for _, r := range p.queue {
			select {
			case work <- r:
			case <-ctx.Done():
				return
			}
		}
	}()
	var wg sync.WaitGroup
	for range min(jobs, max(len(p.queue), 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range work {
				// The feeder may have sent a run as ctx was
				// cancelled: it does not start.
				if ctx.Err() != nil {
					continue
				}
				r.do(p.warm)
				finished <- r
			}
		}()
	}
	go func() {
		wg.Wait()
		close(finished)
	}()
	return finished
}

// do runs r and saves its result for each of its points. A result the
// first point cannot save counts as failed, as in a sweep of one figure.
func (r *run) do(warm *bench.Warm) {
	begin := time.Now()
	defer func() { r.end = time.Now() }()
	r.result, r.err = runBench(r.config, warm)
	r.wall = time.Since(begin)
	if r.err == nil {
		r.err = save(r.targets[0].path, r.result)
	}
	if r.err != nil {
		r.result = nil
		return
	}
	for i := 1; i < len(r.targets); i++ {
		r.targets[i].err = save(r.targets[i].path, r.result)
	}
}

// finish hands a finished run's result to its points.
func (p *pool) finish(r *run) {
	p.figs[r.owner].runTime += r.wall
	for _, t := range r.targets {
		f := &p.figs[t.fig]
		o := &f.out[t.i]
		o.Result, o.Err, o.Reused = r.result, r.err, t.fig != r.owner
		if t.err != nil {
			o.Err = t.err
		}
		f.left--
		if r.end.After(f.done) {
			f.done = r.end
		}
	}
	// The points hold the result now; it goes with the last figure
	// that reports it.
	r.result = nil
}

// errs joins figure k's failed runs and, when its runs are not all done
// because ctx was cancelled, says so.
func (p *pool) errs(ctx context.Context, k int) error {
	f := &p.figs[k]
	var errs []error
	for _, o := range f.out {
		if o.Err != nil {
			errs = append(errs, fmt.Errorf("%s: %s %s x=%s: %w", f.Spec.ID, o.Panel, o.Series, o.XLabel(), o.Err))
		}
	}
	if f.left > 0 {
		dir := RunsDir(p.opt.Dir, f.Spec, p.opt.Scale)
		errs = append(errs, fmt.Errorf("%s: interrupted; finished runs are kept in %s and the next sweep resumes: %w", f.Spec.ID, dir, ctx.Err()))
	}
	return errors.Join(errs...)
}
