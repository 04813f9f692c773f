package main

import (
	"fmt"
	"os"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/dmbench/dmbench/cost"
)

func calibrateCommand() *cli.Command {
	return &cli.Command{
		Name:  "calibrate",
		Usage: "measure the cost table's kernels on this machine and print them beside the table",
		Action: func(*cli.Context) error {
			fmt.Println("Measuring the cost table's kernels (about 10 s). The table is global;")
			fmt.Println("these numbers tell how this machine compares, they change nothing.")
			tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "KERNEL\tTABLE\tMEASURED\tUNIT")
			for _, m := range cost.Calibrate() {
				fmt.Fprintf(tw, "%s\t%.2f\t%.2f\t%s\n", m.Name, m.TableNs, m.Measured, m.Unit)
			}
			fmt.Fprintf(tw, "cacheline transfer (published, not measured)\t%.0f\t-\tns\n", cost.Default.CachelineTransferNs)
			return tw.Flush()
		},
	}
}
