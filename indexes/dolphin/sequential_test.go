package dolphin

import (
	"bytes"
	"testing"

	"github.com/dmbench/dmbench/indexes"
	"github.com/dmbench/dmbench/indexes/indextest"
	"github.com/dmbench/dmbench/transport"
	"github.com/dmbench/dmbench/transport/sim"
)

// Inserting hashed keys one by one into leaves of 8 slots splits leaves,
// grows special nodes and splits partial keys; every key stays findable.
func TestSequentialSmallLeaves(t *testing.T) {

	for _, ks := range []int{8, 24} {
		cfg := transport.Config{ComputeNodes: 1, MemoryNodes: 2, Threads: 1, MemoryCores: 1, ComputeCores: 1, MemoryBytes: 256 << 20}
		f, err := sim.New(cfg, sim.CX6)
		if err != nil {
			t.Fatal(err)
		}
		x := indextest.Build(t, "dolphin", indexes.Env{Fabric: f, KeySize: ks, ValueSize: 8, CacheBytes: 4 << 20}, map[string]string{"span": "8"}).(*Index)
		c := x.NewClient(f.Setup(2)).(*client)
		keys := indextest.Keys(3000, ks)
		for i, k := range keys {
			if err := c.Insert(k, indextest.Value(uint64(i), 8)); err != nil {
				t.Fatalf("insert %d: %v", i, err)
			}
			for j := 0; j <= i; j += 1 + i/7 {
				v, ok, err := c.Search(keys[j])
				if err != nil || !ok || !bytes.Equal(v, indextest.Value(uint64(j), 8)) {
					t.Fatalf("after insert %d: search %d (%x) = %x %v %v", i, j, keys[j], v, ok, err)
				}
			}
		}
	}
}
