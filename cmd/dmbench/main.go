// Command dmbench runs range indexes on simulated or real disaggregated
// memory and reproduces the papers' figures. See the README.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/urfave/cli/v2"

	_ "github.com/dmbench/dmbench/indexes/all"
)

func main() {
	tuneGC()
	os.Exit(run(os.Args, os.Stderr))
}

// run runs the command line args and returns the exit status: 0, 1 for a
// failed run or bad input, 2 for a command line that does not parse.
func run(args []string, stderr io.Writer) int {
	usage := func(_ *cli.Context, err error, _ bool) error { return usageError{err} }
	commands := []*cli.Command{runCommand(), reproduceCommand(), sweepCommand(), plotCommand(), claimsCommand(), compareCommand(), listCommand(), calibrateCommand(), memnodeCommand(), computenodeCommand()}
	for _, c := range commands {
		c.OnUsageError = usage // one line of error, not a page of help
	}
	app := &cli.App{
		Name:  "dmbench",
		Usage: "benchmark range indexes on RDMA disaggregated memory",
		// A -p value may hold commas (a scan-length list, a key): never
		// split repeated flags on them.
		DisableSliceFlagSeparator: true,
		HideHelpCommand:           true,
		Commands:                  commands,
		OnUsageError:              usage,
		ErrWriter:                 stderr,
	}
	err := app.Run(args)
	if err == nil {
		return 0
	}
	fmt.Fprintln(stderr, "dmbench:", err)
	if errors.As(err, new(usageError)) {
		return 2
	}
	return 1
}

// usageError marks a command line that does not parse: exit status 2.
type usageError struct{ error }

func (u usageError) Unwrap() error { return u.error }
