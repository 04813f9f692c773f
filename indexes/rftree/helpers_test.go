package rftree

import (
	"encoding/binary"
	"iter"
	"testing"

	"github.com/dmbench/dmbench/indexes"
	"github.com/dmbench/dmbench/indexes/indextest"
	"github.com/dmbench/dmbench/transport"
	"github.com/dmbench/dmbench/transport/sim"
)

// simCluster is the shape the package's own tests run on: two memory
// nodes, compute nodes after them.
func simCluster(t testing.TB, computeNodes, threads int, mode transport.Mode) *sim.Fabric {
	t.Helper()
	return indextest.SimFabric(t, transport.Config{
		ComputeNodes: computeNodes, MemoryNodes: 2, Threads: threads,
		MemoryCores: 2, ComputeCores: 1, MemoryBytes: 128 << 20, Mode: mode, Seed: 7,
	}, sim.CX6)
}

func build(t testing.TB, f transport.Fabric, raw map[string]string) *Index {
	t.Helper()
	return indextest.Build(t, "rftree", indexes.Env{Fabric: f, KeySize: 8, ValueSize: 8, CacheBytes: 4 << 20}, raw).(*Index)
}

func key(i uint64) []byte { return binary.BigEndian.AppendUint64(nil, i) }
func val(i uint64) []byte { return binary.LittleEndian.AppendUint64(nil, i) }

// loadSeq yields keys step, 2*step, ... (n of them) with values key+1.
func loadSeq(n, step uint64) iter.Seq2[[]byte, []byte] {
	return indextest.Pairs(n, func(i uint64) []byte { return key((i + 1) * step) },
		func(i uint64) []byte { return val((i+1)*step + 1) })
}

// refreshNow rebuilds the SLC of c's compute node.
func refreshNow(c indexes.Client) error {
	cl := indexes.CoreOf(c).(*client)
	return cl.refresh(cl.cn.slc.Load(), true)
}
