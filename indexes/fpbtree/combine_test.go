package fpbtree

import (
	"testing"

	"github.com/dmbench/dmbench/indexes"
	"github.com/dmbench/dmbench/indexes/combine/combinetest"
	"github.com/dmbench/dmbench/indexes/indextest"
	"github.com/dmbench/dmbench/transport/sim"
)

// With combine=true the fpbtree index combines as DMTree does: 100
// clients of one compute node updating and searching one key share few
// remote rounds, and the history is linearizable (combinetest.HotKey).
func TestCombiningHotKey(t *testing.T) {
	const ks, vs = 8, 8
	combinetest.HotKey(t, func(f *sim.Fabric) combinetest.Index {
		x := indextest.Build(t, "fpbtree", indexes.Env{Fabric: f, KeySize: ks, ValueSize: vs, CacheBytes: 4 << 20},
			map[string]string{"span": "8", "internal_span": "8", "combine": "true"}).(*Tree)
		if err := x.BulkLoad(f.Setup(1), seq(1000, ks, vs, 1)); err != nil {
			t.Fatal(err)
		}
		return x
	}, testKey(500, ks))
}
