package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/magiconair/properties"
	"github.com/pingcap/go-ycsb/pkg/client"
	"github.com/pingcap/go-ycsb/pkg/prop"
	"github.com/pingcap/go-ycsb/pkg/ycsb"
)

// shellCommand is one of go-ycsb's shell commands and its arguments.
type shellCommand struct {
	name, args string
	min, max   int // bounds on the number of arguments; max < 0: none
}

var shellCommands = []shellCommand{
	{"read", "key [field0 field1 ...]", 1, -1},
	{"scan", "key recordcount [field0 field1 ...]", 2, -1},
	{"insert", "key field0=value0 [field1=value1 ...]", 2, -1},
	{"update", "key field0=value0 [field1=value1 ...]", 2, -1},
	{"delete", "key", 1, 1},
	{"table", "[tablename]", 0, 1},
}

// runShell is go-ycsb's shell: one thread that runs the commands it reads,
// one a line, until "exit" or the end of the input, and prints what they
// return in go-ycsb's words.
func runShell(ctx context.Context, dbName string, p *properties.Properties, stdin io.Reader) error {
	d, wl, err := setup(dbName, p)
	if err != nil {
		return err
	}
	threads, err := intProperty(p, prop.ThreadCount, 1, 1, 1<<20)
	if err == nil {
		err = preload(ctx, d, wl, p, int(threads))
	}
	if err != nil {
		return errors.Join(err, d.fabric.Close(), wl.Close())
	}
	sh := &shell{db: client.DbWrapper{DB: d}, table: p.GetString(prop.TableName, prop.TableNameDefault)}
	sh.ctx = sh.db.InitThread(wl.InitThread(ctx, 0, 1), 0, 1)
	prompt := func() {}
	if f, ok := stdin.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			prompt = func() { fmt.Print("» ") }
		}
	}
	in := bufio.NewScanner(stdin)
	for prompt(); ctx.Err() == nil && in.Scan(); prompt() {
		args := strings.Fields(in.Text())
		if len(args) == 0 {
			continue
		}
		if args[0] == "exit" {
			break
		}
		sh.do(args)
	}
	sh.db.CleanupThread(sh.ctx)
	wl.CleanupThread(sh.ctx)
	var readErr error
	if err := in.Err(); err != nil {
		readErr = fmt.Errorf("reading commands: %w", err)
	}
	return errors.Join(readErr, d.Close(), wl.Close())
}

// shell holds the state of a shell session.
type shell struct {
	ctx   context.Context
	db    ycsb.DB
	table string
}

// do runs one command line.
func (sh *shell) do(args []string) {
	i := slices.IndexFunc(shellCommands, func(c shellCommand) bool { return c.name == args[0] })
	if i < 0 {
		names := make([]string, len(shellCommands))
		for j, c := range shellCommands {
			names[j] = c.name
		}
		fmt.Printf("unknown command %q: want %s or exit\n", args[0], strings.Join(names, ", "))
		return
	}
	c, rest := shellCommands[i], args[1:]
	if len(rest) < c.min || c.max >= 0 && len(rest) > c.max {
		fmt.Printf("usage: %s %s\n", c.name, c.args)
		return
	}
	switch c.name {
	case "read":
		sh.read(rest[0], rest[1:])
	case "scan":
		sh.scan(rest[0], rest[1], rest[2:])
	case "insert", "update":
		sh.write(c.name, rest[0], rest[1:])
	case "delete":
		if err := sh.db.Delete(sh.ctx, sh.table, rest[0]); err != nil {
			fmt.Printf("Delete %s failed %v\n", rest[0], err)
			return
		}
		fmt.Printf("Delete %s ok\n", rest[0])
	case "table":
		if len(rest) == 1 {
			sh.table = rest[0]
		}
		fmt.Printf("Using table %s\n", sh.table)
	}
}

func (sh *shell) read(key string, fields []string) {
	row, err := sh.db.Read(sh.ctx, sh.table, key, fields)
	if err != nil {
		fmt.Printf("Read %s failed %v\n", key, err)
		return
	}
	fmt.Printf("Read %s ok\n", key)
	printRow(row)
}

func (sh *shell) scan(key, count string, fields []string) {
	n, err := strconv.Atoi(count)
	if err != nil || n < 0 {
		fmt.Printf("invalid record count %s for scan\n", count)
		return
	}
	rows, err := sh.db.Scan(sh.ctx, sh.table, key, n, fields)
	if err != nil {
		fmt.Printf("Scan from %s with %d failed %v\n", key, n, err)
		return
	}
	if len(rows) == 0 {
		fmt.Println("0 records")
		return
	}
	fmt.Println("--------------------------------")
	for i, row := range rows {
		fmt.Printf("Record %d\n", i+1)
		printRow(row)
	}
	fmt.Println("--------------------------------")
}

func (sh *shell) write(command, key string, pairs []string) {
	values := make(map[string][]byte, len(pairs))
	for _, kv := range pairs {
		f, v, ok := strings.Cut(kv, "=")
		if !ok {
			fmt.Printf("%s %s: %q is not field=value\n", command, key, kv)
			return
		}
		values[f] = []byte(v)
	}
	op, verb := sh.db.Insert, "Insert"
	if command == "update" {
		op, verb = sh.db.Update, "Update"
	}
	if err := op(sh.ctx, sh.table, key, values); err != nil {
		fmt.Printf("%s %s failed %v\n", verb, key, err)
		return
	}
	fmt.Printf("%s %s ok\n", verb, key)
}

// printRow prints fields in name order (go-ycsb prints them in map order).
func printRow(row map[string][]byte) {
	for _, f := range slices.Sorted(maps.Keys(row)) {
		fmt.Printf("%s=%q\n", f, row[f])
	}
}
