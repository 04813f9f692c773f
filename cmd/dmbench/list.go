package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/dmbench/dmbench/bench"
	"github.com/dmbench/dmbench/experiments"
	"github.com/dmbench/dmbench/indexes"
	"github.com/dmbench/dmbench/transport/sim"
	"github.com/dmbench/dmbench/transport/verbs"
	"github.com/dmbench/dmbench/workloads"
)

// listings are the things `dmbench list` can show.
var listings = map[string]func(io.Writer) error{
	"indexes":   listIndexes,
	"workloads": listWorkloads,
	"profiles":  listProfiles,
	"fabrics":   listFabrics,
	"figures":   listFigures,
}

var listOrder = []string{"indexes", "workloads", "profiles", "fabrics", "figures"}

func listCommand() *cli.Command {
	return &cli.Command{
		Name:      "list",
		Usage:     "list indexes, workloads, hardware profiles and fabrics",
		UsageText: "dmbench list [" + strings.Join(listOrder, "|") + "]",
		Action: func(ctx *cli.Context) error {
			what := listOrder
			if ctx.NArg() > 0 {
				what = ctx.Args().Slice()
			}
			for i, w := range what {
				f, ok := listings[w]
				if !ok {
					return fmt.Errorf("cannot list %q: choose from %s", w, strings.Join(listOrder, ", "))
				}
				if i > 0 {
					fmt.Println()
				}
				if err := f(os.Stdout); err != nil {
					return err
				}
			}
			return nil
		},
	}
}

func listIndexes(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "INDEX\tPAPER\tSUMMARY")
	for _, s := range indexes.Specs() {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", s.Name, s.Paper, s.Summary)
		for _, p := range s.Params {
			fmt.Fprintf(tw, "  --param %s=%s\t%s\t%s\n", p.Name, p.Default, accepted(p), p.Doc)
		}
	}
	return tw.Flush()
}

func accepted(p indexes.Param) string {
	switch p.Kind {
	case indexes.KindEnum:
		return strings.Join(p.Values, "|")
	case indexes.KindBool:
		return "true|false"
	}
	// A number, and the words it may be instead (subtreelevel=auto).
	s := "number"
	switch {
	case p.Kind == indexes.KindInt && p.Max > p.Min:
		s = fmt.Sprintf("%g..%g", p.Min, p.Max)
	case p.Kind == indexes.KindInt:
		s = "integer"
	}
	return strings.Join(append([]string{s}, p.Values...), "|")
}

func listWorkloads(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "WORKLOAD\tREAD\tUPDATE\tINSERT\tSCAN\tRMW\tDISTRIBUTION\tKEY\tVALUE")
	for _, name := range workloads.Builtins() {
		s, err := workloads.Builtin(name, nil)
		if err != nil {
			return err
		}
		if s.TraceFile != "" {
			// A trace's requests decide the mix; the proportions are unused.
			fmt.Fprintf(tw, "%s\t-\t-\t-\t-\t-\ttrace %s (%s keys)\t%d B\t%d B\n", name, s.TraceFile, s.InsertOrder, s.KeySize, s.ValueSize())
			continue
		}
		fmt.Fprintf(tw, "%s\t%g\t%g\t%g\t%g\t%g\t%s\t%d B\t%d B\n", name, s.ReadProportion, s.UpdateProportion,
			s.InsertProportion, s.ScanProportion, s.ReadModifyWriteProportion, s.RequestDistribution, s.KeySize, s.ValueSize())
	}
	return tw.Flush()
}

func listProfiles(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PROFILE\tMSG RATE\tLINE RATE\tCAS (host/device)\tDESCRIPTION")
	for _, n := range sim.ProfileNames() {
		p, _ := sim.LookupProfile(n)
		fmt.Fprintf(tw, "%s\t%.1f Mops\t%.1f GB/s\t%.2f/%.2f Mops\t%s\n", p.Name, p.MsgRate/1e6, p.LineRate/1e9,
			p.AtomicRateHost/1e6, p.AtomicRateDevice/1e6, p.Desc)
	}
	return tw.Flush()
}

func listFabrics(w io.Writer) error {
	fmt.Fprintln(w, "FABRIC")
	desc := map[string]string{
		"sim":   "deterministic virtual-time simulator of an RDMA cluster (default)",
		"local": "in-process, real time, goroutines in parallel; no NIC model",
		"tcp":   "real time over TCP: memory-node servers (in-process on loopback, or dmbench memnode) execute the one-sided verbs; an emulation of RDMA",
		"verbs": "real RDMA through libibverbs to dmbench memnode --verbs processes (a binary built with -tags rdma)",
	}
	for _, f := range bench.Fabrics {
		fmt.Fprintf(w, "%-6s %s\n", f, desc[f])
	}
	devs := verbs.Devices()
	names := make([]string, len(devs))
	for i, d := range devs {
		names[i] = fmt.Sprintf("%s (ports %v)", d.Name, d.Ports)
	}
	if len(names) == 0 {
		names = []string{"none"}
	}
	fmt.Fprintf(w, "RDMA devices on this host: %s\n", strings.Join(names, ", "))
	return nil
}

func listFigures(w io.Writer) error {
	ids, err := experiments.IDs()
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "FIGURE\tPAPER FIGURE\tSECTION\tSERIES\tCLAIMS\tTITLE")
	for _, id := range ids {
		s, _ := experiments.Lookup(id)
		var labels []string
		for _, se := range s.Series {
			label := se.Label
			if _, err := indexes.Lookup(se.Index); err != nil {
				label += " (missing)"
			}
			labels = append(labels, label)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\n", id, s.Figure, s.Section, strings.Join(labels, ", "), len(s.Claims), s.Title)
	}
	return tw.Flush()
}
