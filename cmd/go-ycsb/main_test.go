package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dmbench/dmbench/indexes"
)

// The tests run the binary as a child process, the test binary itself
// re-executed, because go-ycsb's measurement writes to standard output
// and keeps its state in globals: one process per command, as in use.
const childEnv = "DMBENCH_GO_YCSB_CHILD"

// childTimeout bounds one child: its work takes well under a second, or a
// few under -race on a busy machine.
const childTimeout = 3 * time.Minute

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		os.Exit(run(os.Args[1:], os.Stdin, os.Stderr))
	}
	os.Exit(m.Run())
}

// goYCSB runs the binary with args and stdin and returns its output and
// exit status.
func goYCSB(t *testing.T, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	// A child that hangs fails its test with its goroutines' stacks
	// (SIGQUIT) rather than stalling the whole suite.
	ctx, cancel := context.WithTimeout(context.Background(), childTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], args...)
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGQUIT) }
	cmd.WaitDelay = 10 * time.Second
	// Under -race the child would otherwise sleep a second at exit, the
	// race runtime's default wait for reports from other goroutines.
	cmd.Env = append(os.Environ(), childEnv+"=1", "GORACE=atexit_sleep_ms=0 "+os.Getenv("GORACE"))
	cmd.Stdin = strings.NewReader(stdin)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("go-ycsb %s: no exit after %v\nstdout: %s\nstderr: %s", strings.Join(args, " "), childTimeout, out.String(), errOut.String())
	}
	if exit, ok := err.(*exec.ExitError); ok {
		code = exit.ExitCode()
	} else if err != nil {
		t.Fatalf("running go-ycsb %v: %v", args, err)
	}
	return out.String(), errOut.String(), code
}

// mustRun runs a command that must succeed.
func mustRun(t *testing.T, args ...string) string {
	t.Helper()
	out, errOut, code := goYCSB(t, "", args...)
	if code != 0 {
		t.Fatalf("go-ycsb %s: exit %d\nstderr: %s\nstdout: %s", strings.Join(args, " "), code, errOut, out)
	}
	return out
}

// stockWorkloads is the folder of go-ycsb's own workload files.
func stockWorkloads(t *testing.T) string {
	t.Helper()
	dir, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/pingcap/go-ycsb").Output()
	if err != nil {
		t.Fatalf("locating the go-ycsb module: %v", err)
	}
	return filepath.Join(strings.TrimSpace(string(dir)), "workloads")
}

// ycsbCount is the Count of go-ycsb's summary line for op, 0 if absent.
func ycsbCount(t *testing.T, out, op string) int {
	t.Helper()
	m := regexp.MustCompile(`(?m)^` + op + ` +- Takes\(s\): [0-9.]+, Count: (\d+),`).FindStringSubmatch(out)
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// verbLine matches dmbench's report line of op: its count, then verbs per
// operation in total and by kind (read, write, cas, masked_cas, faa, rpc).
func verbLine(op, verbs string) *regexp.Regexp {
	return regexp.MustCompile(`(?m)^` + op + ` +(\d+) +` + verbs + `\s`)
}

// Each stock go-ycsb workload loads and runs unchanged on the Expected
// bound: go-ycsb's summary counts every operation, and dmbench's report
// shows the bound's verbs (one READ per read or one-record scan, READ and
// WRITE per update).
func TestStockWorkloads(t *testing.T) {
	dir := stockWorkloads(t)
	threads := strconv.Itoa(runThreads)
	for _, tc := range []struct {
		file  string
		ops   []string // operation types whose counts add up to operationcount
		verbs map[string]string
	}{
		{"workloada", []string{"READ", "UPDATE"}, map[string]string{"READ": `1\.00 +1\.00 +0\.00`, "UPDATE": `2\.00 +1\.00 +1\.00`}},
		{"workloadb", []string{"READ", "UPDATE"}, map[string]string{"READ": `1\.00 +1\.00 +0\.00`}},
		{"workloadc", []string{"READ"}, map[string]string{"READ": `1\.00 +1\.00 +0\.00 +0\.00 +0\.00 +0\.00 +0\.00`}},
		{"workloadd", []string{"READ", "INSERT"}, map[string]string{"READ": `1\.00 +1\.00 +0\.00`}},
		{"workloade", []string{"SCAN", "INSERT"}, map[string]string{"SCAN": `1\.00 +1\.00 +0\.00`}},
		{"workloadf", []string{"READ"}, map[string]string{"READ": `1\.00 +1\.00 +0\.00`, "UPDATE": `2\.00 +1\.00 +1\.00`}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			t.Parallel()
			args := []string{"ideal", "-P", filepath.Join(dir, tc.file), "-p", "recordcount=1000", "-p", "operationcount=1000"}
			load := mustRun(t, append([]string{"load"}, append(args, "--threads", "4")...)...)
			if n := ycsbCount(t, load, "INSERT"); n != 1000 {
				t.Errorf("load: INSERT count %d, want 1000\n%s", n, load)
			}
			if !verbLine("INSERT", `2\.00`).MatchString(load) {
				t.Errorf("load: no dmbench line of 2 verbs per INSERT\n%s", load)
			}
			out := mustRun(t, append([]string{"run"}, append(args, "--threads", threads)...)...)
			if !strings.Contains(out, "Preloaded 1000 records") || !strings.Contains(out, "by bulk load (dm.preload=bulk)") {
				t.Errorf("run did not preload the records\n%s", out)
			}
			sum := 0
			for _, op := range tc.ops {
				sum += ycsbCount(t, out, op) + ycsbCount(t, out, op+"_ERROR")
			}
			if sum != 1000 {
				t.Errorf("run: %v counts add up to %d, want 1000\n%s", tc.ops, sum, out)
			}
			// The stock files draw uniformly from the loaded records, so
			// every key go-ycsb asks for is one the bulk load wrote.
			if strings.Contains(out, "_ERROR ") {
				t.Errorf("run: operations failed\n%s", out)
			}
			for op, verbs := range tc.verbs {
				if !verbLine(op, verbs).MatchString(out) {
					t.Errorf("run: no dmbench line %s %s\n%s", op, verbs, out)
				}
			}
			if !regexp.MustCompile(`(?m)^0 +memory +\d+ `).MatchString(out) || !regexp.MustCompile(`(?m)^1 +compute +\d+ `).MatchString(out) {
				t.Errorf("run: no per-node message counts\n%s", out)
			}
		})
	}
}

// Every registered index is a DB: go-ycsb's workload A loads and runs on
// each with several threads over two compute nodes.
func TestEveryIndex(t *testing.T) {
	stock := filepath.Join(stockWorkloads(t), "workloada")
	for _, name := range indexes.Names() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			args := []string{name, "-P", stock, "-p", "recordcount=300", "-p", "operationcount=300",
				"-p", "dm.compute-nodes=2", "-p", "dm.cache-bytes=4MiB"} // DEX builds its cache eagerly: keep it small
			if n := ycsbCount(t, mustRun(t, append([]string{"load"}, append(args, "--threads", "4")...)...), "INSERT"); n != 300 {
				t.Errorf("load: INSERT count %d, want 300", n)
			}
			out := mustRun(t, append([]string{"run"}, append(args, "--threads", strconv.Itoa(runThreads))...)...)
			if n := ycsbCount(t, out, "READ") + ycsbCount(t, out, "UPDATE"); n != 300 {
				t.Errorf("run: READ and UPDATE counts add up to %d, want 300 (a miss would count as an error)\n%s", n, out)
			}
			if !verbLine("READ", `\d+\.\d\d`).MatchString(out) || !verbLine("UPDATE", `\d+\.\d\d`).MatchString(out) {
				t.Errorf("no dmbench verb lines\n%s", out)
			}
		})
	}
}

// dmbench's own property files run too: their 8-byte values become the
// index's, and their dmbench-only properties are named as ignored.
func TestDMTreeWorkload(t *testing.T) {
	args := []string{"ideal", "-P", filepath.Join("..", "..", "workloads", "dmtree-ycsb-a.properties"),
		"-p", "recordcount=1000", "-p", "operationcount=1000", "-p", "dm.compute-nodes=2"}
	load := mustRun(t, append([]string{"load"}, args...)...)
	if n := ycsbCount(t, load, "INSERT"); n != 1000 {
		t.Errorf("load: INSERT count %d, want 1000\n%s", n, load)
	}
	out, errOut, code := goYCSB(t, "", append([]string{"run"}, append(args, "--threads", strconv.Itoa(runThreads))...)...)
	if code != 0 {
		t.Fatalf("run: exit %d: %s", code, errOut)
	}
	if !strings.Contains(errOut, "ignores dmbench's workload properties keysize, seed, zipfianconstant") {
		t.Errorf("no note on the ignored properties: %q", errOut)
	}
	// Zipfian draws can land one past the last record: go-ycsb counts
	// those as READ_ERROR and UPDATE_ERROR.
	n := ycsbCount(t, out, "READ") + ycsbCount(t, out, "READ_ERROR") + ycsbCount(t, out, "UPDATE") + ycsbCount(t, out, "UPDATE_ERROR")
	if n != 1000 || ycsbCount(t, out, "READ") == 0 || ycsbCount(t, out, "UPDATE") == 0 {
		t.Errorf("READ and UPDATE counts add up to %d, want 1000\n%s", n, out)
	}
	for _, want := range []string{"24-byte keys, 8-byte values", "2 compute nodes"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q\n%s", want, out)
		}
	}
	// The bound reads once per READ and reads and writes once per UPDATE;
	// its compute-side directory fails an absent key without a verb.
	// dmbench's rows include the failed operations and say how many.
	perOp := func(op string, verbs int) string {
		ok, failed := ycsbCount(t, out, op), ycsbCount(t, out, op+"_ERROR")
		return regexp.QuoteMeta(fmt.Sprintf("%.2f", float64(verbs*ok)/float64(ok+failed)))
	}
	if !verbLine("READ", perOp("READ", 1)).MatchString(out) || !verbLine("UPDATE", perOp("UPDATE", 2)).MatchString(out) {
		t.Errorf("no dmbench verb lines for READ (%s) and UPDATE (%s)\n%s", perOp("READ", 1), perOp("UPDATE", 2), out)
	}
	failed := ycsbCount(t, out, "READ_ERROR") + ycsbCount(t, out, "UPDATE_ERROR")
	if failed > 0 && !strings.Contains(out, fmt.Sprintf("failed, included above: %s", failList(t, out))) {
		t.Errorf("the report does not name the failed operations\n%s", out)
	}
}

// failList spells go-ycsb's error counts the way dmbench's report does.
func failList(t *testing.T, out string) string {
	var parts []string
	for _, op := range []string{"READ", "UPDATE"} {
		if n := ycsbCount(t, out, op+"_ERROR"); n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, op))
		}
	}
	return strings.Join(parts, ", ")
}

// Bad input: one clear error naming the input and what is accepted, and a
// non-zero exit status (1 for bad values, 2 for a command line that does
// not parse).
func TestBadInput(t *testing.T) {
	stock := filepath.Join(stockWorkloads(t), "workloada")
	base := []string{"run", "ideal", "-P", stock}
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"sim fabric", append(base, "-p", "dm.fabric=sim"), 1, "cannot serve go-ycsb's own goroutines"},
		{"bad threads", append(base, "-p", "dm.threads=0"), 1, `property dm.threads="0": want a positive integer`},
		{"bad size", append(base, "-p", "dm.cache-bytes=lots"), 1, `property dm.cache-bytes="lots": want a byte size`},
		{"bad mode", append(base, "-p", "dm.mode=loose"), 1, `property dm.mode="loose": want paper or strict`},
		{"bad seed", append(base, "-p", "dm.seed=-1"), 1, `property dm.seed="-1": want an unsigned integer`},
		{"unknown dm property", append(base, "-p", "dm.thread=2"), 1, "unknown property dm.thread: the dm.* properties are dm.fabric"},
		{"unknown param", append(base, "-p", "dm.param.span=3"), 1, `index ideal has no parameter "span"`},
		{"short keys", append(base, "-p", "dm.keysize=8"), 1, "property dm.keysize=8: go-ycsb's keys here reach 23 bytes"},
		{"key size range", append(base, "-p", "dm.keysize=300"), 1, `property dm.keysize="300": want an integer from 8 to 256`},
		{"value size", append(base, "-p", "dm.valuesize=0"), 1, `property dm.valuesize="0": want an integer from 1 to`},
		{"integrity", append(base, "-p", "dataintegrity=true"), 1, "want at least fieldcount*fieldlength = 1000"},
		{"bad preload", append(base, "-p", "dm.preload=maybe"), 1, `property dm.preload="maybe": want bulk, insert or none`},
		{"bulk preload and integrity", append(base, "-p", "dataintegrity=true", "-p", "dm.valuesize=1000", "-p", "dm.preload=bulk"), 1, "property dm.preload=bulk: dataintegrity=true checks the values go-ycsb's own inserts make"},
		{"bad count", append(base, "-p", "recordcount=many"), 1, `property recordcount="many": want an integer`},
		{"fewer ops than threads", append(base, "-p", "operationcount=2", "--threads", "4"), 1, "operationcount=2: want at least one operation per thread"},
		{"unknown db", []string{"run", "mysql", "-P", stock}, 1, `db "mysql" is not one of dmbench's indexes: ` + strings.Join(indexes.Names(), ", ")},
		{"missing file", []string{"run", "ideal", "-P", "nosuch.properties"}, 1, "nosuch.properties"},
		{"bad -p", append(base, "-p", "novalue"), 1, `-p "novalue": want name=value`},
		{"no db", []string{"load", "-P", stock}, 2, "no db given: want one of " + strings.Join(indexes.Names(), ", ")},
		{"unknown command", []string{"bench", "ideal"}, 2, `unknown command "bench": want load, run or shell`},
		{"unknown flag", append(base, "--colour", "red"), 2, "flag provided but not defined: -colour"},
		{"extra argument", append(base, "recordcount=5"), 2, `unexpected argument "recordcount=5"`},
		{"no threads", append(base, "--threads", "0"), 2, "--threads 0: want at least 1"},
		{"zero interval", append(base, "-p", "measurement.interval=0"), 1, `property measurement.interval="0": want an integer from 1`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			out, errOut, code := goYCSB(t, "", tc.args...)
			if code != tc.code {
				t.Errorf("exit status %d, want %d\nstderr: %s", code, tc.code, errOut)
			}
			if !strings.Contains(errOut, tc.want) {
				t.Errorf("stderr %q does not contain %q", errOut, tc.want)
			}
			if strings.Contains(out, "Run finished") {
				t.Errorf("a bad configuration ran:\n%s", out)
			}
		})
	}
}

// The shell runs go-ycsb's commands read from standard input and prints
// what they return; the report then shows what each cost.
func TestShell(t *testing.T) {
	stdin := strings.Join([]string{
		"insert user1 field0=hello field1=world",
		"insert user3 field2=third",
		"read user1",
		"read user1 field1",
		"read user2",
		"scan user0 10",
		"update user1 field0=bye",
		"update user9 field0=nobody",
		"insert user4 name=bob",
		"delete user3",
		"scan user1 5 field0",
		"frob",
		"exit",
		"read user1", // after exit: never run
	}, "\n")
	out, errOut, code := goYCSB(t, stdin, "shell", "ideal", "-p", "fieldlength=8")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	want := `Insert user1 ok
Insert user3 ok
Read user1 ok
field0="hello"
field1="world"
Read user1 ok
field1="world"
Read user2 failed ideal READ "user2": key not found
--------------------------------
Record 1
field0="hello"
field1="world"
Record 2
field2="third"
--------------------------------
Update user1 ok
Update user9 failed ideal UPDATE "user9": key not found
Insert user4 failed ideal INSERT "user4": field "name": records have the fields field0 to field9 (fieldcount=10)
Delete user3 ok
--------------------------------
Record 1
field0="bye"
--------------------------------
unknown command "frob": want read, scan, insert, update, delete, table or exit
`
	if !strings.Contains(out, want) {
		t.Errorf("shell output:\n%s\nwant it to contain:\n%s", out, want)
	}
	if strings.Count(out, "Read user1 ok") != 2 {
		t.Errorf("a command after exit ran:\n%s", out)
	}
	// Reads: 3 (one finds nothing and costs the bound no verb); inserts
	// 2; updates 2 (one finds nothing); scans 2; deletes 1.
	for op, count := range map[string]string{"READ": "3", "INSERT": "2", "UPDATE": "2", "SCAN": "2", "DELETE": "1"} {
		if !regexp.MustCompile(`(?m)^` + op + ` +` + count + ` `).MatchString(out) {
			t.Errorf("report has no %s line with count %s\n%s", op, count, out)
		}
	}
}

// The shell can start from go-ycsb's records, bulk-loaded or inserted by
// its load phase, and scan them in key order.
func TestShellPreload(t *testing.T) {
	for _, how := range []string{"bulk", "insert"} {
		out, errOut, code := goYCSB(t, "scan user 3\n", "shell", "ideal", "-P", filepath.Join(stockWorkloads(t), "workloadc"),
			"-p", "recordcount=100", "-p", "dm.preload="+how, "-p", "fieldcount=1", "-p", "fieldlength=10")
		if code != 0 {
			t.Fatalf("dm.preload=%s: exit %d: %s", how, code, errOut)
		}
		if !strings.Contains(out, "Preloaded 100 records") || !regexp.MustCompile(`Record 3\nfield0="[a-zA-Z]{10}"\n`).MatchString(out) || strings.Contains(out, "Record 4") {
			t.Errorf("dm.preload=%s: want 100 records preloaded and a scan of 3 with 10-letter values:\n%s", how, out)
		}
	}
}

// go-ycsb's data integrity check passes on values its own inserts made,
// which a run then preloads by inserting.
func TestDataIntegrity(t *testing.T) {
	out := mustRun(t, "run", "ideal", "-P", filepath.Join(stockWorkloads(t), "workloada"), "-p", "recordcount=200",
		"-p", "operationcount=200", "-p", "dataintegrity=true", "-p", "dm.valuesize=1000", "--threads", strconv.Itoa(runThreads))
	if !strings.Contains(out, "by go-ycsb's load phase (dm.preload=insert)") {
		t.Errorf("dataintegrity=true did not preload by inserting:\n%s", out)
	}
	if n := ycsbCount(t, out, "READ") + ycsbCount(t, out, "UPDATE"); n != 200 {
		t.Errorf("READ and UPDATE counts add up to %d, want 200\n%s", n, out)
	}
}
