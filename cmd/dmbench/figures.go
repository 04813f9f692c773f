package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/dmbench/dmbench/bench"
	"github.com/dmbench/dmbench/experiments"
)

// figureFlags are shared by the commands that work on catalog figures.
func figureFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "scale", Value: "default", Usage: "run size: " + strings.Join(experiments.Scales, ", ")},
		&cli.StringFlag{Name: "out", Value: "results", Usage: "results `DIR`"},
		&cli.IntFlag{Name: "jobs", Usage: "runs at once (default: one per core)"},
		&cli.StringFlag{Name: "trace-dir", Usage: "`DIR` holding the Twitter cache traces (cluster8.0.zst, cluster9.0.zst) that trace figures replay; without them their points need input"},
		&cli.IntFlag{Name: "seeds", Value: 1, Usage: fmt.Sprintf("run every point under `N` seeds (1 to %d): the figures plot the mean with whiskers from the lowest to the highest seed, and the claims are checked on the means and say in how many seeds they hold", experiments.MaxReplicates)},
	}
}

// expand is a figure's points at --scale, each under --seeds seeds.
func expand(ctx *cli.Context, s *experiments.Spec) ([]experiments.Point, error) {
	points, err := s.ExpandInputs(ctx.String("scale"), inputs(ctx))
	if err != nil {
		return nil, err
	}
	points, err = experiments.Replicates(points, ctx.Int("seeds"))
	if err != nil {
		return nil, fmt.Errorf("--seeds: %w", err)
	}
	return points, nil
}

// inputs locate the input files a figure's points need.
func inputs(ctx *cli.Context) experiments.Inputs {
	return experiments.Inputs{TraceDir: ctx.String("trace-dir")}
}

// shardFlag splits the runs over machines (scripts/slurm_reproduce.sh).
func shardFlag() cli.Flag {
	return &cli.StringFlag{Name: "shard", Usage: "run only the `I/N`-th of N disjoint shares of each figure's runs and draw nothing; copy the shards' --out folders into one and reproduce again without --shard to draw the figures and check the claims"}
}

func reproduceCommand() *cli.Command {
	return &cli.Command{
		Name:      "reproduce",
		Usage:     "run, plot and check the claims of catalog figures (resumable)",
		UsageText: "dmbench reproduce [--scale small|default|large] [--jobs N] [--trace-dir DIR] [--shard I/N] FIGURE... (e.g. dex/fig6, fig6, dmtree)",
		Flags:     append(figureFlags(), shardFlag()),
		Action: func(ctx *cli.Context) error {
			specs, err := figureArgs(ctx)
			if err != nil {
				return err
			}
			return reproduce(ctx, specs)
		},
	}
}

func sweepCommand() *cli.Command {
	return &cli.Command{
		Name:      "sweep",
		Usage:     "run, plot and check a figure spec file (resumable)",
		UsageText: "dmbench sweep --spec FILE [--scale ...] [--jobs N] [--shard I/N]",
		Flags:     append(figureFlags(), shardFlag(), &cli.StringFlag{Name: "spec", Usage: "spec `FILE` (YAML, as in experiments/specs)", Required: true}),
		Action: func(ctx *cli.Context) error {
			s, err := experiments.Load(ctx.String("spec"))
			if err != nil {
				return err
			}
			return reproduce(ctx, []*experiments.Spec{s})
		},
	}
}

func plotCommand() *cli.Command {
	return savedRunsCommand("plot", "redraw figures and claims tables from the runs already saved (runs nothing)",
		func(ctx *cli.Context, r *experiments.Report) error {
			if err := r.Write(ctx.String("out")); err != nil {
				return err
			}
			printReport(os.Stdout, r)
			return nil
		})
}

func claimsCommand() *cli.Command {
	return savedRunsCommand("claims", "print the claims tables of figures from the runs already saved",
		func(_ *cli.Context, r *experiments.Report) error {
			fmt.Println(r.ClaimsMarkdown())
			return nil
		})
}

// savedRunsCommand is a command that reports on each figure argument from
// its saved runs, running nothing.
func savedRunsCommand(name, usage string, each func(*cli.Context, *experiments.Report) error) *cli.Command {
	return &cli.Command{
		Name:      name,
		Usage:     usage,
		UsageText: "dmbench " + name + " [--scale ...] FIGURE...",
		Flags:     figureFlags(),
		Action: func(ctx *cli.Context) error {
			specs, err := figureArgs(ctx)
			if err != nil {
				return err
			}
			for _, s := range specs {
				r, err := collect(ctx, s)
				if err != nil {
					return err
				}
				if err := each(ctx, r); err != nil {
					return err
				}
			}
			return nil
		},
	}
}

// figureArgs resolves the figure arguments (ids, papers or figure names).
func figureArgs(ctx *cli.Context) ([]*experiments.Spec, error) {
	if ctx.NArg() == 0 {
		ids, err := experiments.IDs()
		if err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("no figure given; known figures: %s", strings.Join(ids, ", "))
	}
	if sc := ctx.String("scale"); !contains(experiments.Scales, sc) {
		return nil, fmt.Errorf("--scale %q is not one of %s", sc, strings.Join(experiments.Scales, ", "))
	}
	var specs []*experiments.Spec
	for _, a := range ctx.Args().Slice() {
		ids, err := experiments.Match(a)
		if err != nil {
			return nil, err
		}
		for _, id := range ids {
			s, err := experiments.Lookup(id)
			if err != nil {
				return nil, err
			}
			specs = append(specs, s)
		}
	}
	return specs, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func options(ctx *cli.Context) experiments.Options {
	return experiments.Options{Dir: ctx.String("out"), Scale: ctx.String("scale"), Jobs: ctx.Int("jobs"), Progress: os.Stderr}
}

// shard reads --shard; without it, every run.
func shard(ctx *cli.Context) (experiments.Shard, error) {
	if !ctx.IsSet("shard") {
		return experiments.Shard{}, nil
	}
	return experiments.ParseShard(ctx.String("shard"))
}

// reproduce sweeps the figures through one pool of --jobs runs, then
// writes each figure's plots, runs and claims in figure order as soon as
// its runs are done. An interrupt (Ctrl-C) stops launching runs; finished
// ones are kept.
func reproduce(ctx *cli.Context, specs []*experiments.Spec) error {
	sh, err := shard(ctx)
	if err != nil {
		return err
	}
	opt := options(ctx)
	opt.Shard = sh
	figs := make([]experiments.Figure, len(specs))
	for i, s := range specs {
		points, err := expand(ctx, s)
		if err != nil {
			return err
		}
		figs[i] = experiments.Figure{Spec: s, Points: points}
	}
	sigctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	start := time.Now()
	var failed []error
	var walls []figureWall
	defer func() { printWalls(os.Stdout, walls, time.Since(start)) }()
	err = experiments.SweepFigures(sigctx, figs, opt, func(i int, sw experiments.Swept) error {
		s := specs[i]
		done := "interrupted"
		if !sw.Done.IsZero() {
			done = sw.Done.Sub(start).Round(time.Second).String()
		}
		walls = append(walls, figureWall{s.ID, sw.RunTime, done})
		if sw.Err != nil {
			failed = append(failed, sw.Err)
		}
		if ctx.IsSet("shard") {
			state := "done"
			if sw.Done.IsZero() {
				state = "interrupted, its finished runs kept"
			} else if sw.Err != nil {
				state = "done with failed runs"
			}
			fmt.Printf("%s: shard %s %s; its runs are in %s\n", s.ID, sh, state, experiments.RunsDir(opt.Dir, s, opt.Scale))
			return nil
		}
		r := experiments.NewReport(s, ctx.String("scale"), sw.Outcomes)
		if err := r.Write(ctx.String("out")); err != nil {
			return err
		}
		printReport(os.Stdout, r)
		return nil
	})
	if err != nil {
		return err
	}
	return errors.Join(failed...)
}

func collect(ctx *cli.Context, s *experiments.Spec) (*experiments.Report, error) {
	points, err := expand(ctx, s)
	if err != nil {
		return nil, err
	}
	outs, err := experiments.Collect(s, points, options(ctx))
	if err != nil {
		return nil, err
	}
	return experiments.NewReport(s, ctx.String("scale"), outs), nil
}

// figureWall is what a figure of a reproduce took on the wall clock:
// shown to the user, never part of a result.
type figureWall struct {
	id string
	// run sums the wall time of the runs the figure ran (figures run at
	// once, so their sweeps overlap and their spans would not add up).
	run time.Duration
	// done is when its last run finished, since reproduce started, or
	// that it was interrupted.
	done string
}

// printWalls prints, per figure, its runs' summed wall time and when it
// was done, then the sums and the total wall time.
func printWalls(w io.Writer, walls []figureWall, total time.Duration) {
	if len(walls) == 0 {
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "\nfigure\trun time (its runs' wall times, summed)\tdone after (wall time since the start)")
	var runs time.Duration
	for _, f := range walls {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", f.id, f.run.Round(time.Second), f.done)
		runs += f.run
	}
	fmt.Fprintf(tw, "total\t%s\t%s\n", runs.Round(time.Second), total.Round(time.Second))
	tw.Flush()
}

// formatQuotient is a claim's measured/expected, or nothing.
func formatQuotient(v experiments.Verdict) string {
	if _, ok := v.Off(); !ok {
		return ""
	}
	return fmt.Sprintf("%.2fx of the paper", v.Quotient)
}

// printReport prints a figure's claims and where its files went.
func printReport(w io.Writer, r *experiments.Report) {
	fmt.Fprintf(w, "\n%s (%s, scale %s): %s\n", r.Spec.ID, r.Spec.Figure, r.Scale, r.Summary())
	if len(r.Missing) > 0 {
		fmt.Fprintf(w, "  missing series (index not implemented yet): %s\n", strings.Join(r.Missing, ", "))
	}
	for _, in := range r.Inputs {
		fmt.Fprintf(w, "  needs input: %s\n", in)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, v := range r.Verdicts {
		m := v.Measured
		if v.Reason != "" {
			m = v.Reason
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", v.Status, v.Claim.ID, v.Paper, m, formatQuotient(v))
	}
	tw.Flush()
	for _, f := range r.Files {
		fmt.Fprintf(w, "  wrote %s\n", f)
	}
}

func compareCommand() *cli.Command {
	return &cli.Command{
		Name:      "compare",
		Usage:     "put two result sets side by side (two result files, or two runs folders) with ratios",
		UsageText: "dmbench compare [--metric NAME] A B",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "metric", Value: "throughput_mops", Usage: "metric to compare (see experiments.Metric names)"},
		},
		Action: func(ctx *cli.Context) error {
			if ctx.NArg() != 2 {
				return fmt.Errorf("compare takes two result files or two runs folders, got %d arguments", ctx.NArg())
			}
			a, err := resultSet(ctx.Args().Get(0))
			if err != nil {
				return err
			}
			b, err := resultSet(ctx.Args().Get(1))
			if err != nil {
				return err
			}
			rows, err := experiments.Compare(ctx.String("metric"), a, b)
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintf(tw, "POINT\tA\tB\tB/A\n")
			for _, r := range rows {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.Name, r.A, r.B, r.Ratio)
			}
			return tw.Flush()
		},
	}
}

// resultSet reads one result file, or every result of a runs folder keyed
// by point name (the file name without its configuration hash, so runs of
// the same point on different fabrics line up).
func resultSet(path string) (map[string]*bench.Result, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		r, err := bench.ReadResult(path)
		if err != nil {
			return nil, err
		}
		return map[string]*bench.Result{"result": r}, nil
	}
	files, err := filepath.Glob(filepath.Join(path, "*.json"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%s holds no result files (*.json)", path)
	}
	set := map[string]*bench.Result{}
	for _, f := range files {
		r, err := bench.ReadResult(f)
		if err != nil {
			return nil, err
		}
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		if i := strings.LastIndex(name, "__"); i > 0 {
			name = name[:i]
		}
		set[name] = r
	}
	return set, nil
}
