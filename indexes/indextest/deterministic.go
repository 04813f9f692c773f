package indextest

import (
	"slices"
	"testing"
)

// testDeterministic runs the linearizability workload twice on two fresh
// simulated clusters with the same seed: the simulator's event hashes and
// the two histories must be equal, or the index draws on something other
// than the fabric (map order, the wall clock, global state, unseeded
// randomness) and a sim run cannot be reproduced from its seed.
func testDeterministic(t *testing.T, c *combo) {
	var hashes [2]uint64
	var histories [2][]event
	for i := range hashes {
		fx := c.fixture(t, 7, 24, 16)
		histories[i] = fx.linearizabilityWorkload(t).events
		hash, ok := fx.EventHash()
		if !ok {
			t.Fatalf("indextest: the %s fabric has no event hash", fx.Fabric.Name())
		}
		hashes[i] = hash
	}
	if hashes[0] != hashes[1] {
		t.Errorf("two runs with seed 7 have event hashes %#x and %#x", hashes[0], hashes[1])
	}
	if i := firstDifference(histories[0], histories[1]); i >= 0 {
		t.Errorf("two runs with seed 7 differ at operation %d of %d and %d", i, len(histories[0]), len(histories[1]))
	}
}

// firstDifference is the index of the first event where a and b differ,
// -1 if they are equal.
func firstDifference(a, b []event) int {
	if slices.Equal(a, b) {
		return -1
	}
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}
