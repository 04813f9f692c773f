package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/dmbench/dmbench/transport"
)

// report prints dmbench's view of what the threads did since the last
// reset: verbs and payload bytes per operation of each type (attributed by
// the endpoint tags), then each node's NIC messages and bytes. Call it once
// every thread has been cleaned up.
func (d *db) report(w io.Writer) error {
	st := d.fabric.Stats()
	info := d.idx.Info()
	d.mu.Lock()
	ops, failed, baseline := d.ops, d.failed, d.baseline
	d.mu.Unlock()

	o := d.opts
	fmt.Fprintln(w, "***************** dmbench *****************")
	where := "the local fabric"
	if o.fabric == "tcp" {
		where = "the tcp fabric (memory nodes " + strings.Join(o.memNodes, ",") + ")"
	}
	fmt.Fprintf(w, "%s on %s: %s x %s, %s x %s, %d-byte keys, %d-byte values, %s memory mode\n",
		d.index, where, count(o.memoryNodes, "memory node"), count(o.memoryCores, "RPC core"),
		count(o.computeNodes, "compute node"), count(o.threads, "thread"), o.keySize, o.valueSize, o.mode)
	if len(info.Params) > 0 {
		fmt.Fprintf(w, "parameters: %s\n", strings.Join(info.Params.Sorted(), " "))
	}

	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprint(tw, "Operation\tCount\tVerbs/op")
	for k := range transport.NumVerbKinds {
		fmt.Fprintf(tw, "\t%s", k)
	}
	fmt.Fprintln(tw, "\tBytes/op")
	row := func(name string, n uint64, c *transport.Counters) {
		per := func(x uint64) float64 { return float64(x) / float64(n) }
		fmt.Fprintf(tw, "%s\t%d\t%.2f", name, n, per(c.Verbs()))
		for k := range transport.NumVerbKinds {
			fmt.Fprintf(tw, "\t%.2f", per(c[k].Count))
		}
		fmt.Fprintf(tw, "\t%.1f\n", per(c.Bytes()))
	}
	var total uint64
	for tag := tagRead; tag < numTags; tag++ {
		if ops[tag] > 0 {
			row(tagNames[tag], ops[tag], &st.Verbs.ByTag[tag])
			total += ops[tag]
		}
	}
	if total > 0 {
		// As in dmbench's results, the total counts every verb, those
		// issued outside an operation (RPC handlers, client setup) too.
		all := st.Verbs.Total()
		row("TOTAL", total, &all)
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	var fails []string
	for tag := tagRead; tag < numTags; tag++ {
		if failed[tag] > 0 {
			fails = append(fails, fmt.Sprintf("%d %s", failed[tag], tagNames[tag]))
		}
	}
	if len(fails) > 0 {
		// go-ycsb lists failed operations apart (READ_ERROR, ...); their
		// verbs are spent all the same, so the rows above include them.
		fmt.Fprintf(w, "failed, included above: %s\n", strings.Join(fails, ", "))
	}
	// The local and tcp fabrics count payload bytes only: no header model.
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "Node\tRole\tMsgs\tRPCs\tBytes tx\tBytes rx")
	for _, n := range st.Nodes {
		fmt.Fprintf(tw, "%d\t%s\t%d\t%d\t%d\t%d\n", n.ID, n.Role, n.Msgs, n.RPCs, n.BytesTx, n.BytesRx)
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	side := "memory side"
	if d.attached {
		// An attached index counts what this process allocated, not what
		// the process that built and loaded it did.
		side = "memory side allocated by this process"
	}
	fmt.Fprintf(w, "%s: %d bytes; compute-side cache: %d bytes", side, info.MemoryBytes, info.CacheBytes)
	if looks := info.CacheLookups - baseline.CacheLookups; looks > 0 {
		fmt.Fprintf(w, ", %.1f%% hits", 100*float64(info.CacheHits-baseline.CacheHits)/float64(looks))
	}
	_, err := fmt.Fprintln(w)
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	return nil
}

// count spells n things, in the plural unless one.
func count(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return fmt.Sprintf("%d %ss", n, thing)
}
