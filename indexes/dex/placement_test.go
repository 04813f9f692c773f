package dex

import (
	"testing"

	"github.com/dmbench/dmbench/indexes"
	"github.com/dmbench/dmbench/indexes/indextest"
	"github.com/dmbench/dmbench/transport"
	"github.com/dmbench/dmbench/transport/sim"
)

// subtreelevel=auto is the paper's M = 3 at its own 200 M records, whose
// 45 subtrees it keeps as nearly as smaller trees allow: at 10 M records
// level 2 has 103 nodes and level 3 three; at 100 K level 1 has 48 and
// level 2 two, one of them holding two of the 48.
func TestAutoSubtreeLevel(t *testing.T) {
	l := newLayout(8, 8)
	if got := levelCounts(&l, paperRecords); len(got) != 5 || got[paperSubtreeLevel] != 45 {
		t.Errorf("the paper's tree: %v nodes a level, want 45 at level 3 under the root at 4", got)
	}
	for _, tc := range []struct {
		records uint64
		m       int
	}{{0, 3}, {200_000_000, 3}, {10_000_000, 2}, {1_000_000, 2}, {100_000, 1}, {12_000, 1}, {40, 0}} {
		if got := autoSubtreeLevel(&l, tc.records); got != tc.m {
			t.Errorf("%d records: M = %d, want %d", tc.records, got, tc.m)
		}
	}
	// 1-byte keys and values: the paper's tree is a level lower (root at
	// level 3), and its root's children are what M counts.
	small := newLayout(1, 1)
	if got := len(levelCounts(&small, paperRecords)); got != 4 {
		t.Errorf("1-byte entries: the paper's tree has %d levels, want 4", got)
	}
	if got := autoSubtreeLevel(&small, 1_000_000); got != 1 {
		t.Errorf("1-byte entries, 10^6 records: M = %d, want 1", got)
	}
}

// With M from the record count, a bulk load spreads the subtrees
// over every memory node, and searches from one compute node reach them
// all; with the constant M = 3 over the same 12,000 keys the root is the
// one subtree and every search goes to memory node 0.
func TestSubtreesSpreadOverMemoryNodes(t *testing.T) {
	const n = 12000
	for _, tc := range []struct {
		m      string
		spread bool
	}{{"auto", true}, {"3", false}} {
		t.Run("subtreelevel="+tc.m, func(t *testing.T) {
			cfg := transport.Config{ComputeNodes: 1, MemoryNodes: 4, Threads: 1, MemoryCores: 1, ComputeCores: 1,
				MemoryBytes: 64 << 20, Mode: transport.ModePaper, Seed: 1}
			f := indextest.SimFabric(t, cfg, sim.CX5)
			env := indexes.Env{Fabric: f, KeySize: 8, ValueSize: 8, Records: n, Partitions: [][]byte{key(0)}}
			x := indextest.Build(t, "dex", env, map[string]string{"subtreelevel": tc.m, "cache": "false", "partitioning": "false"}).(*Index)
			if err := x.BulkLoad(f.Setup(4), loadSeq(n, 1)); err != nil {
				t.Fatal(err)
			}
			f.Go(4, 0, func(ep transport.Endpoint) {
				c := x.NewClient(ep)
				for i := uint64(1); i <= n; i += 97 {
					if _, ok, err := c.Search(key(i)); err != nil || !ok {
						t.Errorf("search %d: %v, %v", i, ok, err)
					}
				}
			})
			if err := f.Run(); err != nil {
				t.Fatal(err)
			}
			st := f.Stats()
			reached := 0
			for _, m := range cfg.MemoryNodeIDs() {
				if st.Verbs.ByNode[m].Verbs() > 0 {
					reached++
				}
			}
			if want := map[string]int{"auto": 1, "3": 3}[tc.m]; x.opt.m != want {
				t.Errorf("subtreelevel=%s over %d records: M = %d, want %d", tc.m, n, x.opt.m, want)
			}
			if tc.spread && reached != 4 || !tc.spread && reached != 1 {
				t.Errorf("M = %d: searches reached %d memory nodes", x.opt.m, reached)
			}
		})
	}
}
