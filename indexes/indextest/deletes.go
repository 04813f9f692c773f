package indextest

import (
	"testing"
)

// deleteKeys is the deletes case's loaded key count.
const deleteKeys = 4000

// testDeletes deletes half of a loaded index (every other key in key
// order, so every leaf loses entries) from every compute node and checks
// searches and scans; then deletes deleted keys again and updates them
// (both ErrNotFound), re-inserts a third of them, updates live keys, and
// checks; then deletes every key, checks the index is empty, inserts some
// keys old and new, and checks.
func testDeletes(t *testing.T, c *combo) {
	fx := c.fixture(t, 6, 8, 8)
	p, rng := fx.p, fx.rng
	all := fx.ComputeNodes()
	universe := fx.keys(0, deleteKeys+500)
	loaded := sortedCopy(universe[:deleteKeys])
	fx.load(t, loaded)
	check := func() {
		t.Helper()
		fx.runSpread(t, all, p.verify(rng, universe, 20, deleteKeys+500))
	}

	// Groups stay in key order: dealt round-robin, neighbouring keys go to
	// different workers, which then change the same leaves at once.
	var deleted [][]byte
	var groups [][]step
	for i, k := range loaded {
		if i%2 == 0 {
			groups = append(groups, []step{p.delete(k)})
			deleted = append(deleted, k)
		}
	}
	fx.runGroups(t, all, groups)
	check()

	groups = groups[:0]
	for i, k := range deleted {
		switch i % 3 {
		case 0:
			groups = append(groups, []step{p.delete(k), p.update(k), p.insert(k), p.search(k)})
		case 1:
			groups = append(groups, []step{p.update(k), p.search(k)})
		default:
			groups = append(groups, []step{p.delete(k)})
		}
	}
	for i, k := range loaded {
		if i%4 == 1 {
			groups = append(groups, []step{p.update(k), p.search(k)})
		}
	}
	fx.runGroups(t, all, groups)
	check()

	groups = groups[:0]
	for _, k := range fx.live(universe) {
		groups = append(groups, []step{p.delete(k)})
	}
	fx.runGroups(t, all, groups)
	if p.m.len() != 0 {
		t.Fatalf("indextest: the model holds %d keys after deleting all", p.m.len())
	}
	check()

	groups = groups[:0]
	for _, k := range universe[deleteKeys-250:] {
		groups = append(groups, []step{p.insert(k)})
	}
	fx.runGroups(t, all, groups)
	check()
}
