package main

import (
	"context"
	"encoding/csv"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	"github.com/magiconair/properties"
	"github.com/pingcap/go-ycsb/pkg/prop"

	"github.com/dmbench/dmbench/indexes"
)

func main() { os.Exit(run(os.Args[1:], os.Stdin, os.Stderr)) }

// commands are go-ycsb's, in its order of listing.
var commands = []struct{ name, usage string }{
	{"load", "load <db> [-P file]... [-p name=value]... [--threads n] [--target ops/s] [--interval s] [--table name]"},
	{"run", "run <db> [-P file]... [-p name=value]... [--threads n] [--target ops/s] [--interval s] [--table name]"},
	{"shell", "shell <db> [-P file]... [-p name=value]... [--table name]"},
}

// run runs the command line args (without the program name) and returns
// the exit status: 0, 1 for bad input or a failed run, 2 for a command line
// that does not parse. go-ycsb's own output goes to standard output, as its
// packages write there.
func run(args []string, stdin io.Reader, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Print(usage())
		return 0
	}
	command, err := lookupCommand(args[0])
	if err != nil {
		fmt.Fprintf(stderr, "go-ycsb: %v\n", err)
		return 2
	}
	inv, err := parseArgs(command, args[1:])
	if errors.Is(err, flag.ErrHelp) {
		fmt.Print(usage())
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "go-ycsb %s: %v (see go-ycsb --help)\n", command, err)
		return 2
	}
	p, err := inv.properties()
	if err == nil {
		err = execute(command, inv.db, p, stdin, stderr)
	}
	if err != nil {
		fmt.Fprintf(stderr, "go-ycsb %s: %v\n", command, err)
		return 1
	}
	return 0
}

// execute runs a parsed command line.
func execute(command, db string, p *properties.Properties, stdin io.Reader, stderr io.Writer) error {
	if names := dmbenchOnly(p); len(names) > 0 {
		fmt.Fprintf(stderr, "go-ycsb: note: go-ycsb's core workload ignores dmbench's workload properties %s (`dmbench run` honours them; the key size here is dm.keysize)\n",
			strings.Join(names, ", "))
	}
	// The first interrupt stops the threads and still prints the results,
	// as go-ycsb does; once it has, a second one kills the process.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		stop()
	}()
	if command == "shell" {
		return runShell(ctx, db, p, stdin)
	}
	return runClient(ctx, command, db, p)
}

// lookupCommand accepts a command's name or a unique prefix of it, as
// go-ycsb's command-line library is configured to.
func lookupCommand(arg string) (string, error) {
	var found []string
	for _, c := range commands {
		if c.name == arg {
			return arg, nil
		}
		if strings.HasPrefix(c.name, arg) {
			found = append(found, c.name)
		}
	}
	if len(found) == 1 {
		return found[0], nil
	}
	return "", fmt.Errorf("unknown command %q: want load, run or shell", arg)
}

// invocation is a parsed command line.
type invocation struct {
	command string
	db      string
	files   []string // -P, in order
	values  []string // -p, in order
	table   string
	threads int
	target  int
	seconds int // --interval
	given   map[string]bool
}

// parseArgs parses a command's flags and its DB name with go-ycsb's flags:
// -P/--property_file, -p/--prop, --table, and for load and run --threads,
// --target and --interval.
func parseArgs(command string, args []string) (*invocation, error) {
	inv := &invocation{command: command, given: map[string]bool{}}
	fs := flag.NewFlagSet("go-ycsb "+command, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	// go-ycsb's -P splits its value on commas (a pflag string slice);
	// its -p does so only in shell, where it is a slice too.
	files := listFlag{dst: &inv.files, csv: true}
	values := listFlag{dst: &inv.values, csv: command == "shell"}
	fs.Var(files, "P", "")
	fs.Var(files, "property_file", "")
	fs.Var(values, "p", "")
	fs.Var(values, "prop", "")
	fs.StringVar(&inv.table, "table", "", "")
	if command != "shell" {
		fs.IntVar(&inv.threads, "threads", 1, "")
		fs.IntVar(&inv.target, "target", 0, "")
		fs.IntVar(&inv.seconds, "interval", 10, "")
	}
	flags, positional := splitArgs(fs, args)
	if err := fs.Parse(flags); err != nil {
		return nil, err
	}
	fs.Visit(func(f *flag.Flag) { inv.given[f.Name] = true })
	switch len(positional) {
	case 0:
		return nil, fmt.Errorf("no db given: want one of %s", strings.Join(indexes.Names(), ", "))
	case 1:
		inv.db = positional[0]
	default:
		return nil, fmt.Errorf("unexpected argument %q after db %s: a property is given as -p name=value", positional[1], positional[0])
	}
	switch {
	case inv.given["threads"] && inv.threads < 1:
		return nil, fmt.Errorf("--threads %d: want at least 1", inv.threads)
	case inv.target < 0:
		return nil, fmt.Errorf("--target %d: want 0 (unlimited) or more operations per second", inv.target)
	case inv.given["interval"] && inv.seconds < 1:
		return nil, fmt.Errorf("--interval %d: want at least 1 second", inv.seconds)
	}
	return inv, nil
}

// splitArgs separates flags from positional arguments as go-ycsb's
// command-line library (spf13/pflag) does, which the standard flag package
// alone does not: flags may follow the DB name, a one-letter flag may carry
// its value attached (-Pworkloada), and "--" ends the flags. Every flag
// takes a value.
func splitArgs(fs *flag.FlagSet, args []string) (flags, positional []string) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return flags, append(positional, args[i+1:]...)
		}
		if len(a) < 2 || a[0] != '-' {
			positional = append(positional, a)
			continue
		}
		name, _, inline := strings.Cut(strings.TrimLeft(a, "-"), "=")
		f := fs.Lookup(name)
		if f == nil && a[1] != '-' && fs.Lookup(a[1:2]) != nil {
			flags = append(flags, a[:2], a[2:])
			continue
		}
		flags = append(flags, a)
		if f != nil && !inline && i+1 < len(args) {
			i++
			flags = append(flags, args[i])
		}
	}
	return flags, positional
}

// listFlag is a repeatable flag; with csv set, each value is a
// comma-separated list.
type listFlag struct {
	dst *[]string
	csv bool
}

func (l listFlag) String() string {
	if l.dst == nil {
		return ""
	}
	return strings.Join(*l.dst, ",")
}

func (l listFlag) Set(v string) error {
	if !l.csv {
		*l.dst = append(*l.dst, v)
		return nil
	}
	if v == "" {
		return nil
	}
	vals, err := csv.NewReader(strings.NewReader(v)).Read()
	if err != nil {
		return fmt.Errorf("%q is not a comma-separated list: %w", v, err)
	}
	*l.dst = append(*l.dst, vals...)
	return nil
}

// properties loads the -P files in order, applies -p on top and then the
// flags, as go-ycsb does.
func (inv *invocation) properties() (*properties.Properties, error) {
	p := properties.NewProperties()
	if len(inv.files) > 0 {
		var err error
		if p, err = properties.LoadFiles(inv.files, properties.UTF8, false); err != nil {
			return nil, fmt.Errorf("-P: %w", err)
		}
	}
	set := func(k, v string) error {
		if _, _, err := p.Set(k, v); err != nil {
			return fmt.Errorf("property %s=%q: %w", k, v, err)
		}
		return nil
	}
	var errs []error
	for _, kv := range inv.values {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			errs = append(errs, fmt.Errorf("-p %q: want name=value", kv))
			continue
		}
		errs = append(errs, set(k, v))
	}
	if inv.command != "shell" {
		errs = append(errs, set(prop.DoTransactions, strconv.FormatBool(inv.command == "run")), set(prop.Command, inv.command))
	}
	for _, f := range []struct {
		flag, prop string
		v          int
	}{{"threads", prop.ThreadCount, inv.threads}, {"target", prop.Target, inv.target}, {"interval", prop.LogInterval, inv.seconds}} {
		if inv.given[f.flag] {
			errs = append(errs, set(f.prop, strconv.Itoa(f.v)))
		}
	}
	if inv.given["table"] {
		errs = append(errs, set(prop.TableName, inv.table))
	}
	return p, errors.Join(errs...)
}

// dmbench's own workload properties, which its property files set for
// `dmbench run` and go-ycsb's core workload does not know.
var dmbenchWorkloadProperties = []string{"keysize", "partitionedkeys", "seed", "warmupoperationcount", "zipfianconstant"}

func dmbenchOnly(p *properties.Properties) []string {
	var names []string
	for _, k := range dmbenchWorkloadProperties {
		if _, ok := p.Get(k); ok {
			names = append(names, k)
		}
	}
	return names
}

func usage() string {
	var b strings.Builder
	b.WriteString("go-ycsb with dmbench's range indexes as its databases\n(go doc github.com/dmbench/dmbench/cmd/go-ycsb tells more).\n\nUsage:\n")
	for _, c := range commands {
		fmt.Fprintf(&b, "  go-ycsb %s\n", c.usage)
	}
	fmt.Fprintf(&b, "\nDatabases: %s\n", strings.Join(indexes.Names(), ", "))
	fmt.Fprintf(&b, "dmbench properties (-p): %s, %s<name>\n", dmNames(), paramPrefix)
	return b.String()
}
