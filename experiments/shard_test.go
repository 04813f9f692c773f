package experiments

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dmbench/dmbench/bench"
)

// Shards of a sweep are disjoint, and copied into one folder they are the
// whole sweep's results, bit for bit but for the wall-clock fields.
func TestShardsUnionIsTheWholeSweep(t *testing.T) {
	spec := strings.Replace(tinySpec, "values: [1, 4]", "values: [1, 2, 3, 4, 6]", 1)
	s, err := Parse("tiny.yaml", []byte(spec))
	if err != nil {
		t.Fatal(err)
	}
	points, err := s.Expand("small")
	if err != nil {
		t.Fatal(err)
	}
	sweep := func(dir string, sh Shard) map[string][]byte {
		t.Helper()
		opt := Options{Dir: dir, Scale: "small", Jobs: 1, Shard: sh}
		if _, err := Sweep(context.Background(), s, points, opt); err != nil {
			t.Fatal(err)
		}
		files := map[string][]byte{}
		runs := RunsDir(dir, s, "small")
		entries, err := os.ReadDir(runs)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			r, err := bench.ReadResult(filepath.Join(runs, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			r.WallS, r.LoadWallS, r.WarmupWallS = 0, 0, 0
			b, err := r.JSON()
			if err != nil {
				t.Fatal(err)
			}
			files[e.Name()] = b
		}
		return files
	}
	whole := sweep(t.TempDir(), Shard{})
	if len(whole) != 5 {
		t.Fatalf("the whole sweep saved %d runs, want 5", len(whole))
	}
	union := map[string][]byte{}
	for i := 1; i <= 3; i++ {
		part := sweep(t.TempDir(), Shard{I: i, N: 3})
		if len(part) == 0 || len(part) == len(whole) {
			t.Errorf("shard %d/3 saved %d of %d runs", i, len(part), len(whole))
		}
		for name, b := range part {
			if _, dup := union[name]; dup {
				t.Errorf("%s is in two shards", name)
			}
			union[name] = b
		}
	}
	if len(union) != len(whole) {
		t.Errorf("the shards saved %d runs, the whole sweep %d", len(union), len(whole))
	}
	for name, b := range whole {
		if !bytes.Equal(union[name], b) {
			t.Errorf("%s differs between the shards and the whole sweep", name)
		}
	}
}

func TestParseShard(t *testing.T) {
	if sh, err := ParseShard("2/5"); err != nil || sh != (Shard{I: 2, N: 5}) {
		t.Errorf("2/5: %v, %v", sh, err)
	}
	for _, bad := range []string{"0/3", "4/3", "3", "a/b", "1/0", "1/3x"} {
		if _, err := ParseShard(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}
