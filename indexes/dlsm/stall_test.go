package dlsm

import (
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/dmbench/dmbench/indexes"
	"github.com/dmbench/dmbench/indexes/indextest"
	"github.com/dmbench/dmbench/transport"
	"github.com/dmbench/dmbench/transport/local"
	"github.com/dmbench/dmbench/transport/sim"
)

// Writers racing through many flushes with one immutable memtable allowed
// stall on the flush and on level 0 and lose nothing: every key is found
// afterwards, by search and by scan, from both compute nodes, and level 0
// is empty once the last compaction has run.
func TestStalledWritersLoseNothing(t *testing.T) {
	const threads, perClient = 4, 600
	for _, fabric := range []string{"sim", "local"} {
		t.Run(fabric, func(t *testing.T) {
			cfg := transport.Config{ComputeNodes: 2, MemoryNodes: 1, Threads: threads, MemoryCores: 1, ComputeCores: 1, MemoryBytes: 64 << 20}
			var f transport.Fabric
			var err error
			if fabric == "sim" {
				f, err = sim.New(cfg, sim.CX6)
			} else {
				f, err = local.New(cfg)
			}
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			x := indextest.Build(t, "dlsm", indexes.Env{Fabric: f, KeySize: 8, ValueSize: 8},
				map[string]string{"memtable": "2048", "immutables": "1"}).(*Index)
			k := func(th, i int) []byte { return binary.BigEndian.AppendUint64(nil, uint64(i*threads+th+1)) }
			comp := f.Config().ComputeNodeIDs()
			for th := range threads {
				f.Go(comp[0], th, func(ep transport.Endpoint) {
					c := x.NewClient(ep)
					for i := range perClient {
						if err := c.Insert(k(th, i), k(th, i)); err != nil {
							t.Error(err)
							return
						}
					}
				})
			}
			if err := f.Run(); err != nil {
				t.Fatal(err)
			}
			for _, n := range comp {
				f.Go(n, 0, func(ep transport.Endpoint) {
					c := x.NewClient(ep)
					for th := range threads {
						for i := range perClient {
							if v, ok, err := c.Search(k(th, i)); !ok || err != nil || string(v) != string(k(th, i)) {
								t.Errorf("node %d: key %x: %x %v %v", n, k(th, i), v, ok, err)
								return
							}
						}
					}
					got := 0
					if err := c.Scan(make([]byte, 8), threads*perClient+10, func(key, val []byte) bool {
						got++
						return true
					}); err != nil {
						t.Error(err)
					}
					if got != threads*perClient {
						t.Errorf("node %d: scan of everything found %d keys, want %d", n, got, threads*perClient)
					}
				})
			}
			if err := f.Run(); err != nil {
				t.Fatal(err)
			}
			s := x.shards[0]
			if n := len(s.ver.levels[0]); n != 0 {
				t.Errorf("%d tables left in level 0", n)
			}
			deeper := 0
			for _, l := range s.ver.levels[1:] {
				deeper += len(l)
			}
			if deeper == 0 {
				t.Error(fmt.Errorf("no table below level 0 after %d inserts", threads*perClient))
			}
		})
	}
}
