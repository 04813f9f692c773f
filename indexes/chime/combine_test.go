package chime

import (
	"testing"

	"github.com/dmbench/dmbench/indexes/combine/combinetest"
	"github.com/dmbench/dmbench/transport/sim"
)

// 100 clients of one compute node update one key at the same time, then
// search it: write combining runs far fewer remote updates than there are
// writers, read delegation fewer searches than readers, the history is
// linearizable (combinetest.HotKey), and the rounds issue few verbs.
func TestCombiningHotKey(t *testing.T) {
	const clients = combinetest.Clients
	n := combinetest.HotKey(t, func(f *sim.Fabric) combinetest.Index {
		x := build(t, f, map[string]string{"span": "32"})
		if err := x.BulkLoad(f.Setup(1), load(1000)); err != nil {
			t.Fatal(err)
		}
		return x
	}, key(500))
	// Uncombined, each update is 4 verbs and each search 1.
	if n > clients+40 {
		t.Errorf("%d updates and searches of one key issued %d verbs; want at most %d (%d uncombined)", clients, n, clients+40, clients*5)
	}
}
