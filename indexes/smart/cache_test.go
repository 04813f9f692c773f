package smart

import (
	"fmt"
	"testing"

	"github.com/dmbench/dmbench/indexes"
	"github.com/dmbench/dmbench/indexes/indextest"
	"github.com/dmbench/dmbench/transport"
	"github.com/dmbench/dmbench/transport/sim"
)

// The radix cache stays within its budget by evicting through its FIFO,
// and Info reports the bytes in use; a search whose path the cache no
// longer holds READs the nodes again, and one whose node is cached uses
// it though nothing above it is (the root never is).
func TestCacheBudget(t *testing.T) {
	cfg := transport.Config{ComputeNodes: 1, MemoryNodes: 1, Threads: 1, MemoryCores: 1, ComputeCores: 1, MemoryBytes: 64 << 20}
	f := indextest.SimFabric(t, cfg, sim.CX6)
	const budget = 3 * 2080 // three 256-slot nodes
	x := indextest.Build(t, "smart", indexes.Env{Fabric: f, KeySize: 8, ValueSize: 8, CacheBytes: budget}, nil).(*Index)
	if err := x.BulkLoad(f.Setup(0), indextest.Pairs(2000, key, key)); err != nil {
		t.Fatal(err)
	}
	var ops []indextest.Op[indexes.Client]
	for i := uint64(0); i < 2000; i += 256 {
		ops = append(ops, indextest.Op[indexes.Client]{Name: fmt.Sprint("search ", i), Do: search(i, true)})
	}
	ops = append(ops,
		indextest.Op[indexes.Client]{Name: "search 0 again", Do: search(0, true)},
		indextest.Op[indexes.Client]{Name: "search 1792 again", Do: search(1792, true)})
	got := indextest.VerbsPerOp(t, f, 1, x.NewClient, nil, ops)
	if info := x.Info(); info.CacheBytes == 0 || info.CacheBytes > budget {
		t.Errorf("Info().CacheBytes = %d, want 1 to %d", info.CacheBytes, budget)
	}
	// The node of the first key was evicted first (FIFO): searching it
	// again READs the root slot, the root, the node and the leaf.
	if n := got[len(got)-2][transport.VerbRead].Count; n != 4 {
		t.Errorf("search after eviction: %d READs, want 4 (root slot, root, node, leaf): %v", n, got[len(got)-2])
	}
	// The last key's node is still cached: its leaf is the only READ.
	if n := got[len(got)-1][transport.VerbRead].Count; n != 1 {
		t.Errorf("search through a cached node: %d READs, want 1 (leaf): %v", n, got[len(got)-1])
	}
}

// P-SMART writes a key of its own partition under a local lock: an update
// is a READ and a WRITE, no RDMA atomic.
func TestPartitionedUpdateIssuesNoAtomics(t *testing.T) {
	cfg := transport.Config{ComputeNodes: 1, MemoryNodes: 1, Threads: 1, MemoryCores: 1, ComputeCores: 1, MemoryBytes: 64 << 20}
	f := indextest.SimFabric(t, cfg, sim.CX6)
	env := indexes.Env{Fabric: f, KeySize: 8, ValueSize: 8, CacheBytes: 4 << 20, Partitions: [][]byte{make([]byte, 8)}}
	x := indextest.Build(t, "smart", env, map[string]string{"partitioned": "true"}).(*Index)
	if err := x.BulkLoad(f.Setup(0), indextest.Pairs(700, key, key)); err != nil {
		t.Fatal(err)
	}
	ops := []indextest.Op[indexes.Client]{
		{Name: "warm", Do: search(5, true)},
		{Name: "update", Do: func(c indexes.Client) error { return c.Update(key(5), key(6)) }},
		{Name: "delete", Do: func(c indexes.Client) error { return c.Delete(key(5)) }},
	}
	got := indextest.VerbsPerOp(t, f, 1, x.NewClient, nil, ops)
	if err := (want{transport.VerbRead: {1, 34}, transport.VerbWrite: {1, 26}}).check(got[1]); err != nil {
		t.Errorf("update: %v", err)
	}
	// The delete's only atomic is the slot CAS to a tombstone.
	if err := (want{transport.VerbRead: {1, 34}, transport.VerbWrite: {1, 26}, transport.VerbCAS: {1, 16}}).check(got[2]); err != nil {
		t.Errorf("delete: %v", err)
	}
}
