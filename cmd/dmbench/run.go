package main

import (
	"errors"
	"fmt"
	"os"
	"runtime/pprof"
	"strings"

	"github.com/dustin/go-humanize"
	"github.com/urfave/cli/v2"

	"github.com/dmbench/dmbench/bench"
	"github.com/dmbench/dmbench/transport"
	"github.com/dmbench/dmbench/transport/sim"
	"github.com/dmbench/dmbench/workloads"
)

func runCommand() *cli.Command {
	return &cli.Command{
		Name:      "run",
		Usage:     "run one configuration and print its result",
		UsageText: "dmbench run --index NAME [-P FILE | --workload NAME] [-p key=value ...] [options]",
		Flags:     runFlags(),
		Action: func(ctx *cli.Context) error {
			c, err := configFromFlags(ctx)
			if err != nil {
				return err
			}
			return runAndReport(ctx, c)
		},
	}
}

// computenodeCommand runs one compute node of a run whose compute nodes
// are processes of their own.
func computenodeCommand() *cli.Command {
	return &cli.Command{
		Name:  "computenode",
		Usage: "run one compute node of a run whose compute nodes are processes, on the tcp fabric",
		Description: "Start one per compute node (--compute-nodes of them), with the same run options, on any hosts. " +
			"They meet at the rendezvous (dmbench memnode --rendezvous on the first memory node), which gives each its compute node; " +
			"the first to claim the index builds and loads it, the others attach; every process prints and writes the whole run's result, " +
			"merged from all compute nodes. If one fails, all fail naming it.",
		UsageText: "dmbench computenode --rendezvous ADDR --listen ADDR --memnodes ADDR,... --key FILE --index NAME --workload NAME [run options]",
		Flags: append(runFlags(),
			&cli.StringFlag{Name: "rendezvous", Usage: "`ADDR` (host:port) of the run's rendezvous", Required: true},
			&cli.StringFlag{Name: "listen", Value: "127.0.0.1:0", Usage: "`ADDR` (host:port) this compute node serves its regions on, reachable by the other compute nodes"},
			&cli.DurationFlag{Name: "wait", Value: bench.DefaultWait, Usage: "how long to wait for the other compute nodes at each step"},
		),
		Action: func(ctx *cli.Context) error {
			c, err := configFromFlags(ctx)
			if err != nil {
				return err
			}
			if ctx.String("fabric") != "tcp" {
				return fmt.Errorf("--fabric %s: a compute node in a process of its own runs on the tcp fabric", ctx.String("fabric"))
			}
			if len(c.MemNodes) == 0 {
				return errors.New("--memnodes: give the running memory nodes (dmbench memnode) as host:port,...")
			}
			if w := ctx.Duration("wait"); w <= 0 {
				return fmt.Errorf("--wait %v: must be positive", w)
			}
			c.Process = &bench.Process{Rendezvous: ctx.String("rendezvous"), Listen: ctx.String("listen"), Wait: ctx.Duration("wait")}
			if err := c.Validate(); err != nil {
				return err
			}
			return runAndReport(ctx, c)
		},
	}
}

// runAndReport runs c and writes and prints its result as the run flags
// ask.
func runAndReport(ctx *cli.Context, c bench.Config) error {
	if p := ctx.String("cpuprofile"); p != "" {
		f, err := os.Create(p)
		if err != nil {
			return fmt.Errorf("--cpuprofile: %w", err)
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return fmt.Errorf("--cpuprofile: %w", err)
		}
		defer pprof.StopCPUProfile()
	}
	res, err := bench.Run(c)
	if err != nil {
		return err
	}
	if p := ctx.String("json"); p != "" {
		b, err := res.JSON()
		if err != nil {
			return err
		}
		if err := bench.WriteFileAtomic(p, b); err != nil {
			return err
		}
	}
	if p := ctx.String("csv"); p != "" {
		if err := bench.WriteCSV(p, []*bench.Result{res}); err != nil {
			return err
		}
	}
	res.Summary(os.Stdout)
	return nil
}

// runFlags are the options of a run.
func runFlags() []cli.Flag {
	d := bench.Default()
	return append([]cli.Flag{
		&cli.StringFlag{Name: "index", Usage: "index to run (see dmbench list indexes)", Required: true},
		&cli.StringSliceFlag{Name: "param", Usage: "index parameter `key=value` (repeatable)"},
		&cli.StringFlag{Name: "P", Usage: "workload property `FILE` (go-ycsb format)"},
		&cli.StringFlag{Name: "workload", Usage: "built-in workload `NAME` (see dmbench list workloads)"},
		&cli.StringSliceFlag{Name: "p", Usage: "workload property `key=value` (repeatable, overrides -P)"},
		&cli.StringFlag{Name: "fabric", Value: d.Fabric, Usage: "sim, local, tcp or verbs"},
		&cli.StringFlag{Name: "memnodes", Usage: "tcp, verbs: running memory-node servers (dmbench memnode, with --verbs for verbs) as `host:port,...`, one per memory node (tcp's default: in this process on loopback)"},
		&cli.StringFlag{Name: "key", Usage: "tcp, verbs: cluster key `FILE` the --memnodes servers were started with"},
		&cli.StringFlag{Name: "profile", Value: d.Profile, Usage: "sim hardware profile: " + strings.Join(sim.ProfileNames(), ", ")},
		&cli.IntFlag{Name: "compute-nodes", Value: d.ComputeNodes},
		&cli.IntFlag{Name: "threads", Value: d.Threads, Usage: "client threads per compute node"},
		&cli.IntFlag{Name: "coroutines", Value: d.Coroutines, Usage: "clients per thread"},
		&cli.IntFlag{Name: "memory-nodes", Value: d.MemoryNodes},
		&cli.IntFlag{Name: "memory-cores", Value: d.MemoryCores, Usage: "RPC cores per memory node"},
		&cli.StringFlag{Name: "cache-bytes", Value: humanize.IBytes(d.CacheBytes), Usage: "compute-side cache per compute node: bytes, or KiB/MiB/GiB (powers of 1024, what the papers mean by MB and GB) or KB/MB/GB (powers of 1000)"},
		&cli.StringFlag{Name: "memory-bytes", Usage: "memory region per memory node (default: sized from the workload)"},
		&cli.Int64Flag{Name: "records", Usage: "records to bulk-load (recordcount)"},
		&cli.Int64Flag{Name: "ops", Usage: "measured operations (operationcount)"},
		&cli.Int64Flag{Name: "warmup", Usage: "warm-up operations (warmupoperationcount)"},
		&cli.Uint64Flag{Name: "seed", Value: d.Seed, Usage: "seeds the fabric and the workload"},
		&cli.StringFlag{Name: "mode", Value: "paper", Usage: "memory semantics: paper or strict"},
		&cli.Float64Flag{Name: "max-ms", Aliases: []string{"max-virtual-ms"}, Usage: "stop the measured phase after this much time (0: run every operation)"},
		&cli.Float64Flag{Name: "timeline-ms", Usage: "record throughput in windows of this many ms of the measured phase"},
		&cli.Float64Flag{Name: "repartition-at-ms", Usage: "scale out this many ms into the measured phase: the last compute node starts as a spare and receives part of --repartition-from's keys (needs -p partitionedkeys=true and an index that repartitions)"},
		&cli.IntFlag{Name: "repartition-from", Value: 0, Usage: "compute node (0-based) that hands keys to the spare"},
		&cli.Float64Flag{Name: "repartition-fraction", Value: 0.5, Usage: "upper fraction of that node's key range to move"},
		&cli.StringFlag{Name: "json", Usage: "write the complete result to `FILE`"},
		&cli.StringFlag{Name: "csv", Usage: "write the result as a one-row CSV to `FILE`"},
		&cli.StringFlag{Name: "cpuprofile", Usage: "write a Go CPU profile of the run to `FILE` (where the simulator spends wall time)"},
	}, deviceFlags...)
}

// configFromFlags turns the run flags into a bench.Config; every bad value
// is an error naming its flag and what is accepted.
func configFromFlags(ctx *cli.Context) (bench.Config, error) {
	c := bench.Default()
	c.Index = ctx.String("index")
	var err error
	if c.Params, err = keyValues("--param", ctx.StringSlice("param")); err != nil {
		return c, err
	}
	props, err := keyValues("-p", ctx.StringSlice("p"))
	if err != nil {
		return c, err
	}
	for flag, prop := range map[string]string{"records": "recordcount", "ops": "operationcount", "warmup": "warmupoperationcount"} {
		if ctx.IsSet(flag) {
			props[prop] = fmt.Sprint(ctx.Int64(flag))
		}
	}
	if ctx.IsSet("seed") {
		props["seed"] = fmt.Sprint(ctx.Uint64("seed"))
	}
	switch file, name := ctx.String("P"), ctx.String("workload"); {
	case file != "" && name != "":
		return c, fmt.Errorf("-P %s and --workload %s: give one workload, not both", file, name)
	case file != "":
		c.Workload, err = workloads.Load(file, props)
	case name != "":
		c.Workload, err = workloads.Builtin(name, props)
	default:
		return c, fmt.Errorf("no workload: give -P FILE or --workload NAME (one of %s)", strings.Join(workloads.Builtins(), ", "))
	}
	if err != nil {
		return c, err
	}
	c.Fabric, c.Profile = ctx.String("fabric"), ctx.String("profile")
	c.ComputeNodes, c.Threads, c.Coroutines = ctx.Int("compute-nodes"), ctx.Int("threads"), ctx.Int("coroutines")
	c.MemoryNodes, c.MemoryCores = ctx.Int("memory-nodes"), ctx.Int("memory-cores")
	if m := ctx.String("memnodes"); m != "" {
		c.MemNodes = strings.Split(m, ",")
		if c.ClusterKey, err = readKey(ctx.String("key")); err != nil {
			return c, err
		}
		if !ctx.IsSet("memory-nodes") {
			c.MemoryNodes = len(c.MemNodes)
		}
	}
	if c.Fabric == "verbs" {
		hca, err := hcaOptions(ctx)
		if err != nil {
			return c, err
		}
		c.Verbs = &hca
	}
	c.Seed = ctx.Uint64("seed")
	if c.CacheBytes, err = size("--cache-bytes", ctx.String("cache-bytes")); err != nil {
		return c, err
	}
	if s := ctx.String("memory-bytes"); s != "" {
		if c.MemoryBytes, err = size("--memory-bytes", s); err != nil {
			return c, err
		}
	}
	if c.Mode, err = transport.ParseMode(ctx.String("mode")); err != nil {
		return c, fmt.Errorf("--mode: %w", err)
	}
	if ms := ctx.Float64("max-ms"); ms < 0 {
		return c, fmt.Errorf("--max-ms %v: must not be negative", ms)
	} else {
		c.MaxPhaseNs = int64(ms * 1e6)
	}
	if ms := ctx.Float64("timeline-ms"); ms < 0 {
		return c, fmt.Errorf("--timeline-ms %v: must not be negative", ms)
	} else {
		c.TimelineNs = int64(ms * 1e6)
	}
	if ctx.IsSet("repartition-at-ms") {
		c.Repartition = &bench.Repartition{
			AtNs: int64(ctx.Float64("repartition-at-ms") * 1e6), From: ctx.Int("repartition-from"), Fraction: ctx.Float64("repartition-fraction"),
		}
	} else if ctx.IsSet("repartition-from") || ctx.IsSet("repartition-fraction") {
		return c, fmt.Errorf("--repartition-from and --repartition-fraction need --repartition-at-ms")
	}
	return c, c.Validate()
}

// keyValues parses repeated key=value flags.
func keyValues(flag string, list []string) (map[string]string, error) {
	m := map[string]string{}
	for _, kv := range list {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("%s %q: want key=value", flag, kv)
		}
		m[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	return m, nil
}

// size parses a byte size such as 256MiB, 1GB or 4096.
func size(flag, s string) (uint64, error) {
	n, err := humanize.ParseBytes(s)
	if err != nil {
		return 0, fmt.Errorf("%s %q: want a byte size such as 4096, 256MiB (2^20 bytes each) or 8GB (10^9 bytes each)", flag, s)
	}
	return n, nil
}
