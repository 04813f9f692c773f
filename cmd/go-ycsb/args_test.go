package main

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// The command line takes the forms go-ycsb's does (spf13/pflag): flags
// before or after the DB name, long and short names, values attached or
// separate, -P lists split on commas, -p split only in shell.
func TestParseArgs(t *testing.T) {
	for _, tc := range []struct {
		name    string
		command string
		args    []string
		files   []string
		values  []string
		threads int
	}{
		{"flags after the db", "load", []string{"ideal", "-P", "a", "-p", "x=1", "--threads", "3"}, []string{"a"}, []string{"x=1"}, 3},
		{"flags before the db", "run", []string{"-P", "a", "--threads=2", "ideal"}, []string{"a"}, nil, 2},
		{"long names", "run", []string{"--property_file", "a", "--prop", "x=1", "ideal", "--property_file=b", "--prop=y=2"}, []string{"a", "b"}, []string{"x=1", "y=2"}, 1},
		{"attached values", "run", []string{"-Pa", "ideal", "-precordcount=5", "-p=y=2"}, []string{"a"}, []string{"recordcount=5", "y=2"}, 1},
		{"-P lists", "run", []string{"ideal", "-P", "a,b", "-P", "c"}, []string{"a", "b", "c"}, nil, 1},
		{"-p keeps commas in run", "run", []string{"ideal", "-p", "x=1,2"}, nil, []string{"x=1,2"}, 1},
		{"-p splits in shell", "shell", []string{"ideal", "-p", "x=1,y=2"}, nil, []string{"x=1", "y=2"}, 0},
		{"a value that looks like a flag", "run", []string{"ideal", "-p", "-pkey=v"}, nil, []string{"-pkey=v"}, 1},
		{"double dash", "run", []string{"-P", "a", "--", "ideal"}, []string{"a"}, nil, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inv, err := parseArgs(tc.command, tc.args)
			if err != nil {
				t.Fatal(err)
			}
			if inv.db != "ideal" || !slices.Equal(inv.files, tc.files) || !slices.Equal(inv.values, tc.values) || inv.threads != tc.threads {
				t.Errorf("db %q files %q values %q threads %d; want ideal %q %q %d", inv.db, inv.files, inv.values, inv.threads, tc.files, tc.values, tc.threads)
			}
		})
	}
	if _, err := parseArgs("shell", []string{"ideal", "--threads", "2"}); err == nil {
		t.Error("shell accepted --threads, which go-ycsb's shell does not have")
	}
}

// Commands may be abbreviated to a unique prefix, as go-ycsb allows.
func TestLookupCommand(t *testing.T) {
	for arg, want := range map[string]string{"load": "load", "lo": "load", "r": "run", "sh": "shell"} {
		if got, err := lookupCommand(arg); err != nil || got != want {
			t.Errorf("lookupCommand(%q) = %q, %v; want %q", arg, got, err, want)
		}
	}
	for _, arg := range []string{"", "x", "runs"} {
		if got, err := lookupCommand(arg); err == nil {
			t.Errorf("lookupCommand(%q) = %q, want an error", arg, got)
		}
	}
}

// Properties come from the -P files in order, then -p, then the flags.
func TestProperties(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	if err := os.WriteFile(a, []byte("recordcount=10\noperationcount=20\nthreadcount=7\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(b, []byte("operationcount=30\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	inv, err := parseArgs("run", []string{"ideal", "-P", a + "," + b, "-p", "recordcount=40", "--threads", "2", "--interval", "1", "--table", "t"})
	if err != nil {
		t.Fatal(err)
	}
	p, err := inv.properties()
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{"recordcount": "40", "operationcount": "30", "threadcount": "2",
		"measurement.interval": "1", "table": "t", "dotransactions": "true", "command": "run"} {
		if got, _ := p.Get(k); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	if _, ok := p.Get("target"); ok {
		t.Error("target set without --target")
	}
}
