package indextest

import (
	"fmt"
	"testing"

	"github.com/dmbench/dmbench/transport"
)

// The sequential case's size: seqOps random operations on key numbers
// below seqSpace leave about 3,200 live keys, some 60-130 leaves of a
// 1 KB-node B+-tree, so leaves and inner nodes split.
const (
	seqSpace = 8192
	seqOps   = 9000
)

// testSequential runs one client's random operations against the model,
// with 8-byte keys and values and with 24-byte keys and 16-byte values,
// then searches every key number of the space and scans.
func testSequential(t *testing.T, c *combo) {
	for _, sz := range []struct{ key, val int }{{8, 8}, {24, 16}} {
		t.Run(fmt.Sprintf("key%d_value%d", sz.key, sz.val), func(t *testing.T) {
			fx := c.fixture(t, 1, sz.key, sz.val)
			node := fx.ComputeNodes()[0]
			steps := fx.randomSteps(seqOps, seqSpace, node)
			steps = append(steps, fx.p.verify(fx.rng, fx.owned(fx.keys(0, seqSpace), node), 20, seqSpace)...)
			fx.run(t, fx.ComputeNodes()[:1], [][]step{steps})
		})
	}
}

// randomSteps plans ops random operations on key numbers below space that
// node may search and write: half inserts (of absent keys and, replacing the value,
// of present ones), updates and deletes of present and absent keys,
// searches, and scans of 1-100 entries (some stopped early by fn, a few of
// everything).
func (fx *fixture) randomSteps(ops int, space uint64, node transport.NodeID) []step {
	p, rng := fx.p, fx.rng
	steps := make([]step, 0, ops)
	for range ops {
		k := Key(rng.Uint64N(space), p.ks)
		for !fx.ownedBy(k, node) {
			k = Key(rng.Uint64N(space), p.ks)
		}
		var s step
		switch r := rng.IntN(100); {
		case r < 50:
			s = p.insert(k)
		case r < 60:
			s = p.update(k)
		case r < 68:
			s = p.delete(k)
		case r < 90:
			s = p.search(k)
		default:
			n, stop := 1+rng.IntN(100), 0
			switch rng.IntN(50) {
			case 0:
				n = everything
			case 1, 2, 3, 4, 5:
				stop = 1 + rng.IntN(n)
			}
			s = p.scan(p.scanStart(rng, space), n, stop)
		}
		steps = append(steps, s)
	}
	return steps
}

// everything is a scan limit above any case's key count: a scan of
// everything, without a limit so large that an index sizing a buffer by
// n would run out of memory.
const everything = 100_000
