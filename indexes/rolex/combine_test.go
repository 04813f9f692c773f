package rolex

import (
	"testing"

	"github.com/dmbench/dmbench/indexes"
	"github.com/dmbench/dmbench/indexes/combine/combinetest"
	"github.com/dmbench/dmbench/indexes/indextest"
	"github.com/dmbench/dmbench/transport/sim"
)

// 100 clients of one compute node update one key at the same time, then
// search it: with combine=true write combining runs far fewer remote
// updates than there are writers, read delegation fewer searches than
// readers, and the history is linearizable (combinetest.HotKey).
func TestCombiningHotKey(t *testing.T) {
	combinetest.HotKey(t, func(f *sim.Fabric) combinetest.Index {
		x := indextest.Build(t, "rolex", indexes.Env{Fabric: f, KeySize: 8, ValueSize: 8, CacheBytes: 4 << 20},
			map[string]string{"span": "8", "error": "8", "maskedcas": "false", "combine": "true"}).(*Rolex)
		if err := x.BulkLoad(f.Setup(1), load(1000)); err != nil {
			t.Fatal(err)
		}
		return x
	}, key(500))
}
