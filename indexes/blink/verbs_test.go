package blink

import (
	"encoding/binary"
	"errors"
	"fmt"
	"testing"

	"github.com/dmbench/dmbench/cost"
	"github.com/dmbench/dmbench/indexes"
	"github.com/dmbench/dmbench/indexes/indextest"
	"github.com/dmbench/dmbench/transport"
	"github.com/dmbench/dmbench/transport/sim"
)

func key(i uint64) []byte { return binary.BigEndian.AppendUint64(nil, i*2+2) }

// between is a key absent from the loaded ones, just above key(i).
func between(i uint64) []byte { return binary.BigEndian.AppendUint64(nil, i*2+3) }

// verbs is an operation's expected verbs: READs and the bytes they bring,
// WRITEs and the bytes they send, CASes.
type verbs struct {
	reads, readBytes   uint64
	writes, writeBytes uint64
	cas                uint64
}

func (w verbs) check(got transport.Counters) error {
	r, wr, c := got[transport.VerbRead], got[transport.VerbWrite], got[transport.VerbCAS]
	if r.Count != w.reads || r.BytesIn != w.readBytes || wr.Count != w.writes || wr.BytesOut != w.writeBytes ||
		c.Count != w.cas || got.Verbs() != w.reads+w.writes+w.cas {
		return fmt.Errorf("got %v, want %d READs of %d B, %d WRITEs of %d B, %d CAS", got, w.reads, w.readBytes, w.writes, w.writeBytes, w.cas)
	}
	return nil
}

// Golden verb counts: the sequences doc.go lists, on a three-level tree
// (root, level 1, leaves) of 10,000 bulk-loaded keys, 45 per leaf.
func TestVerbsPerOperation(t *testing.T) {
	cfg := transport.Config{ComputeNodes: 1, MemoryNodes: 2, Threads: 1, MemoryCores: 1, ComputeCores: 1, MemoryBytes: 64 << 20}
	f := indextest.SimFabric(t, cfg, sim.CX6)
	x := indextest.Build(t, "blink", indexes.Env{Fabric: f, KeySize: 8, ValueSize: 8}, nil).(*Index)
	if err := x.BulkLoad(f.Setup(2), indextest.Pairs(10000, key, key)); err != nil {
		t.Fatal(err)
	}
	const node, root = 1024, 8
	path := func(levels uint64) uint64 { return root + levels*node }
	search := verbs{reads: 4, readBytes: path(3)}
	write := verbs{reads: 5, readBytes: path(4), writes: 1, writeBytes: node, cas: 1}
	absent := verbs{reads: 5, readBytes: path(4), writes: 1, writeBytes: 8, cas: 1}
	split := verbs{reads: 7, readBytes: path(6), writes: 3, writeBytes: 3 * node, cas: 2}
	scan := verbs{reads: 6, readBytes: path(5)}

	notFound := func(err error) error {
		if !errors.Is(err, indexes.ErrNotFound) {
			return fmt.Errorf("got %v, want ErrNotFound", err)
		}
		return nil
	}
	type op struct {
		name string
		do   func(c indexes.Client) error
		want verbs
	}
	ops := []op{
		{"search", func(c indexes.Client) error { return expect(c, key(1000), key(1000)) }, search},
		{"search absent", func(c indexes.Client) error { return expect(c, between(1000), nil) }, search},
		{"update", func(c indexes.Client) error { return c.Update(key(2000), key(7)) }, write},
		{"update absent", func(c indexes.Client) error { return notFound(c.Update(between(2000), key(7))) }, absent},
		{"delete", func(c indexes.Client) error { return c.Delete(key(3000)) }, write},
		{"delete absent", func(c indexes.Client) error { return notFound(c.Delete(key(3000))) }, absent},
		{"insert", func(c indexes.Client) error { return c.Insert(between(4000), key(7)) }, write},
		{"insert present", func(c indexes.Client) error { return c.Insert(key(4001), key(7)) }, write},
		// Leaf 100 (keys 4500-4544) was filled to its 61 entries.
		{"insert + leaf split", func(c indexes.Client) error { return c.Insert(between(4516), key(7)) }, split},
		// Leaf 50 onwards: 45 + 45 + 10 entries.
		{"scan 100", func(c indexes.Client) error { return scanN(c, key(2250), 100) }, scan},
	}
	named := make([]indextest.Op[indexes.Client], len(ops))
	for i, o := range ops {
		named[i] = indextest.Op[indexes.Client]{Name: o.name, Do: o.do}
	}
	// Warm: fill leaf 100, and split leaves 150 and 160 so that this
	// compute node's allocator has a chunk on both memory nodes (the
	// chunk RPC is not part of a split).
	warm := func(c indexes.Client, _ transport.Endpoint) {
		fill := func(leaf, n uint64) {
			for j := range n {
				if err := c.Insert(between(45*leaf+j), key(j)); err != nil {
					t.Fatal(err)
				}
			}
		}
		fill(100, uint64(x.l.leafCard-45))
		fill(150, uint64(x.l.leafCard-45+1))
		fill(160, uint64(x.l.leafCard-45+1))
	}
	got := indextest.VerbsPerOp(t, f, 2, x.NewClient, warm, named)
	for i, o := range ops {
		if err := o.want.check(got[i]); err != nil {
			t.Errorf("%s: %v", o.name, err)
		}
	}
	// The checksum time is the crc step: one CRC per node read.
	st := f.Stats().Verbs.Time.Steps[1][stepCRC]
	if want := 3 * cost.Checksum(node); st != want {
		t.Errorf("search: crc step %d ns, want %d (3 node checks)", st, want)
	}
}

func expect(c indexes.Client, k, want []byte) error {
	v, ok, err := c.Search(k)
	if err == nil && (ok != (want != nil) || string(v) != string(want)) {
		err = fmt.Errorf("search(%x) = %x, %v; want %x", k, v, ok, want)
	}
	return err
}

func scanN(c indexes.Client, start []byte, n int) error {
	got := 0
	err := c.Scan(start, n, func(_, _ []byte) bool { got++; return true })
	if err == nil && got != n {
		err = fmt.Errorf("scan returned %d entries, want %d", got, n)
	}
	return err
}
