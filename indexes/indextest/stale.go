package indextest

import (
	"testing"
)

// The stale-cache case's key numbers: loaded, inserted by node B,
// inserted by node A with its stale cache.
const (
	staleLoaded = 2000
	staleB      = 5000 // B inserts staleLoaded..staleB-1
	staleA      = 6000 // A inserts staleB..staleA-1
)

// testStaleCaches makes compute node A's cache stale and checks that A
// still reads and writes right: A warms its cache on a bulk-loaded index
// (searches every key, scans); B inserts 3,000 keys, which splits most
// leaves and inner nodes, deletes and updates some; A searches every key
// and scans; A inserts, deletes and updates through what is left of its
// stale cache; B and C search every key and scan.
func testStaleCaches(t *testing.T, c *combo) {
	fx := c.fixture(t, 5, 8, 8)
	nodes := fx.ComputeNodes()
	a, b := nodes[:1], nodes[1:2]
	universe := fx.keys(0, staleA)
	fx.load(t, universe[:staleLoaded])
	fx.runSpread(t, a, fx.p.verify(fx.rng, universe[:staleLoaded], 20, staleLoaded))
	fx.runGroups(t, b, fx.mutations(universe[:staleLoaded], universe[staleLoaded:staleB]))
	fx.runSpread(t, a, fx.p.verify(fx.rng, universe, 20, staleA))
	fx.runGroups(t, a, fx.mutations(fx.live(universe[:staleB]), universe[staleB:staleA]))
	fx.runSpread(t, nodes[1:], fx.p.verify(fx.rng, universe, 20, staleA))
}

// mutations plans writes in groups of one key each (so a group's steps
// run in order on one worker): an insert of every key of fresh, a tenth
// of them deleted again and a tenth updated after; a delete of a quarter
// of old and an update of another quarter.
func (fx *fixture) mutations(old, fresh [][]byte) [][]step {
	p, rng := fx.p, fx.rng
	var groups [][]step
	for _, k := range fresh {
		g := []step{p.insert(k)}
		switch rng.IntN(10) {
		case 0:
			g = append(g, p.delete(k))
		case 1:
			g = append(g, p.update(k))
		}
		groups = append(groups, g)
	}
	for _, k := range old {
		switch rng.IntN(4) {
		case 0:
			groups = append(groups, []step{p.delete(k)})
		case 1:
			groups = append(groups, []step{p.update(k)})
		}
	}
	rng.Shuffle(len(groups), func(i, j int) { groups[i], groups[j] = groups[j], groups[i] })
	return groups
}

// live lists the keys of keys the model holds.
func (fx *fixture) live(keys [][]byte) [][]byte {
	var out [][]byte
	for _, k := range keys {
		if _, ok := fx.p.m.get(k); ok {
			out = append(out, k)
		}
	}
	return out
}
