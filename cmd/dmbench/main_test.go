package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Bad input: one clear error naming the input and what is accepted, a
// non-zero exit, and no output file.
func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "r.json")
	keyFile := filepath.Join(dir, "key")
	if err := os.WriteFile(keyFile, []byte("secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	base := []string{"dmbench", "run", "--index", "ideal", "--workload", "dmtree-ycsb-a", "--records", "1000", "--ops", "1000", "--json", out}
	cases := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"unknown index", []string{"dmbench", "run", "--index", "btree", "--workload", "workloada", "--json", out}, 1, `index "btree" is not one of: `},
		{"unknown workload", append(base[:5:5], "nosuch", "--json", out), 1, `nosuch`},
		{"bad fabric", append(base, "--fabric", "rdma"), 1, `fabric "rdma" is not one of: sim, local`},
		{"bad mode", append(base, "--mode", "loose"), 1, `memory mode "loose" is not one of: paper, strict`},
		{"bad size", append(base, "--cache-bytes", "lots"), 1, `--cache-bytes "lots": want a byte size`},
		{"bad property", append(base, "-p", "readproportion=abc"), 1, "readproportion"},
		{"unknown property", append(base, "-p", "colour=red"), 1, "colour"},
		{"bad param syntax", append(base, "--param", "novalue"), 1, `--param "novalue": want key=value`},
		{"unknown param", append(base, "--param", "span=3"), 1, `index ideal has no parameter "span"`},
		{"two workloads", append(base, "-P", "x.properties"), 1, "give one workload, not both"},
		{"bad threads", append(base, "--threads", "0"), 1, "threads = 0: need at least 1"},
		{"unknown flag", append(base, "--colour"), 2, "colour"},
		{"missing file", []string{"dmbench", "run", "--index", "ideal", "-P", filepath.Join(dir, "none.properties")}, 1, "none.properties"},
		{"unknown figure", []string{"dmbench", "reproduce", "--out", dir, "dex/fig99"}, 1, `figure "dex/fig99" is not in the catalog; known figures: `},
		{"bad scale", []string{"dmbench", "reproduce", "--scale", "huge", "dex/fig6"}, 1, `--scale "huge" is not one of small, default, large`},
		{"missing spec file", []string{"dmbench", "sweep", "--spec", filepath.Join(dir, "none.yaml")}, 1, "none.yaml"},
		{"list what", []string{"dmbench", "list", "figures2"}, 1, `cannot list "figures2": choose from indexes, workloads, profiles, fabrics, figures`},
		{"memnode without rdma", []string{"dmbench", "memnode", "--listen", "127.0.0.1:0", "--bytes", "1MiB", "--key", keyFile, "--verbs"}, 1, "--verbs: verbs: this dmbench was built without RDMA support"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var stderr bytes.Buffer
			code := run(tc.args, &stderr)
			if code != tc.code {
				t.Errorf("exit status %d, want %d (stderr: %s)", code, tc.code, stderr.String())
			}
			if !strings.Contains(stderr.String(), tc.want) {
				t.Errorf("stderr %q does not contain %q", stderr.String(), tc.want)
			}
			if _, err := os.Stat(out); err == nil {
				t.Errorf("%s was written by a failed run", out)
			}
		})
	}
}

func TestRunWritesResults(t *testing.T) {
	dir := t.TempDir()
	js, csv := filepath.Join(dir, "r.json"), filepath.Join(dir, "r.csv")
	var stderr bytes.Buffer
	args := []string{"dmbench", "run", "--index", "ideal", "--workload", "dmtree-ycsb-a", "--records", "2000", "--ops", "2000",
		"--compute-nodes", "2", "--threads", "2", "--coroutines", "2", "--cache-bytes", "1MiB", "--json", js, "--csv", csv}
	if code := run(args, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	for _, p := range []string{js, csv} {
		b, err := os.ReadFile(p)
		if err != nil || len(b) == 0 {
			t.Errorf("%s: %v, %d bytes", p, err, len(b))
		}
	}
	b, _ := os.ReadFile(js)
	for _, field := range []string{`"throughput_mops"`, `"event_hash"`, `"latency_ns"`, `"p9999"`, `"verbs_per_op"`, `"masked_cas"`, `"nic_mops"`, `"cs_cache_bytes"`, `"config"`} {
		if !bytes.Contains(b, []byte(field)) {
			t.Errorf("result JSON lacks %s", field)
		}
	}
}
