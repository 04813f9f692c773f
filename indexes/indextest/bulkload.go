package indextest

import (
	"testing"
)

// The bulk-load case's size: 6,000 loaded keys fill about 110 full 1 KB
// leaves, and 2,000 inserts between them split most of those.
const (
	bulkKeys    = 6000
	bulkInserts = 2000
	bulkAbsent  = 600
)

// testBulkLoad bulk-loads sorted keys, checks Info, reads every key back
// from every compute node, searches absent keys and scans (all of it from
// the zero key, and ranges); then inserts keys between the loaded ones
// from two compute nodes and checks everything again from all three.
func testBulkLoad(t *testing.T, c *combo) {
	fx := c.fixture(t, 2, 8, 8)
	all := fx.ComputeNodes()
	fx.load(t, fx.keys(0, bulkKeys))
	fx.checkInfo(t)
	fx.runSpread(t, all, fx.p.verify(fx.rng, fx.keys(0, bulkKeys+bulkAbsent), 40, bulkKeys))

	var inserts []step
	for _, k := range fx.keys(bulkKeys, bulkKeys+bulkInserts) {
		inserts = append(inserts, fx.p.insert(k))
	}
	fx.rng.Shuffle(len(inserts), func(i, j int) { inserts[i], inserts[j] = inserts[j], inserts[i] })
	fx.runSpread(t, all[:2], inserts)
	fx.runSpread(t, all, fx.p.verify(fx.rng, fx.keys(0, bulkKeys+bulkInserts+bulkAbsent), 40, bulkKeys+bulkInserts))
}

// checkInfo checks that Info names the index, lists its effective
// parameters and counts the memory the loaded keys occupy.
func (fx *fixture) checkInfo(t *testing.T) {
	t.Helper()
	info := fx.Index.Info()
	if info.Name != fx.Spec.Name {
		t.Errorf("Info().Name = %q, want %q", info.Name, fx.Spec.Name)
	}
	for name, v := range fx.Params {
		if got, ok := info.Params[name]; !ok || got != v {
			t.Errorf("Info().Params[%q] = %q (present: %v), want the effective value %q", name, got, ok, v)
		}
	}
	if info.MemoryBytes == 0 {
		t.Errorf("Info().MemoryBytes = 0 with %d keys loaded", fx.p.m.len())
	}
}
