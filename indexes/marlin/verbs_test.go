package marlin

import (
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/dmbench/dmbench/indexes"
	"github.com/dmbench/dmbench/indexes/indextest"
	"github.com/dmbench/dmbench/transport"
	"github.com/dmbench/dmbench/transport/sim"
)

func key(i uint64) []byte { return binary.BigEndian.AppendUint64(nil, i*2+2) }

func newSim(t *testing.T) *sim.Fabric {
	t.Helper()
	cfg := transport.Config{ComputeNodes: 1, MemoryNodes: 1, Threads: 1, MemoryCores: 1, ComputeCores: 1, MemoryBytes: 64 << 20, Seed: 3}
	f, err := sim.New(cfg, sim.CX6)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func build(t *testing.T, f transport.Fabric, raw map[string]string) *Index {
	t.Helper()
	return indextest.Build(t, "marlin", indexes.Env{Fabric: f, KeySize: 8, ValueSize: 8, CacheBytes: 4 << 20}, raw).(*Index)
}

// want is a golden verb count: verbs of each kind, and the bytes READ.
type want struct {
	reads, writes, cas, faa uint64
	readBytes               uint64
}

func (w want) check(got transport.Counters) error {
	if got[transport.VerbRead].Count != w.reads || got[transport.VerbWrite].Count != w.writes ||
		got[transport.VerbCAS].Count != w.cas || got[transport.VerbFAA].Count != w.faa ||
		got.Verbs() != w.reads+w.writes+w.cas+w.faa || got[transport.VerbRead].BytesIn != w.readBytes {
		return fmt.Errorf("got %v, want %d READ (%d B in), %d WRITE, %d CAS, %d FAA", got, w.reads, w.readBytes, w.writes, w.cas, w.faa)
	}
	return nil
}

// Golden verb counts with a warm cache: the sequences doc.go lists.
func TestVerbsPerOperation(t *testing.T) {
	f := newSim(t)
	x := build(t, f, nil)
	if err := x.BulkLoad(f.Setup(1), indextest.Pairs(1000, key, key)); err != nil {
		t.Fatal(err)
	}
	l := &x.l
	leaf, item := uint64(l.leafBytes), uint64(l.itemBytes)
	hot, upd, del, fresh := uint64(100), uint64(200), uint64(300), uint64(400)
	// A bulk-loaded leaf holds 48 of 64 slots and a scan of 100 entries
	// from a leaf's first key READs 100/44+1 = 4 leaves (its first guess
	// of 69% fill), then 100 items.
	ops := []struct {
		name string
		do   func(c indexes.Client) error
		want want
	}{
		{"search", func(c indexes.Client) error { return expect(c, hot, key(hot)) }, want{reads: 2, readBytes: leaf + item}},
		{"search absent", func(c indexes.Client) error { return absent(c, 5000) }, want{reads: 1, readBytes: leaf}},
		{"update", func(c indexes.Client) error { return c.Update(key(upd), key(7)) }, want{reads: 1, writes: 1, cas: 1, faa: 2, readBytes: leaf}},
		{"insert present", func(c indexes.Client) error { return c.Insert(key(upd), key(8)) }, want{reads: 1, writes: 1, cas: 1, faa: 2, readBytes: leaf}},
		{"update absent", func(c indexes.Client) error { return notFound(c.Update(key(5000), key(1))) }, want{reads: 1, faa: 2, readBytes: leaf}},
		{"delete", func(c indexes.Client) error { return c.Delete(key(del)) }, want{reads: 1, cas: 1, faa: 2, readBytes: leaf}},
		{"insert after delete (revive)", func(c indexes.Client) error { return c.Insert(key(del), key(9)) }, want{reads: 1, writes: 1, cas: 1, faa: 2, readBytes: leaf}},
		{"insert into a free slot", func(c indexes.Client) error { return c.Insert(fresh2(fresh), key(9)) }, want{reads: 1, writes: 3, cas: 1, faa: 2, readBytes: leaf}},
		// Leaf 10 (keys 480-527) took 15 inserts in the warm-up: 63 of its
		// 64 slots are used, so the next insert splits it: READ, WRITE the
		// item, convert the Spear and re-READ, WRITE the sibling, WRITE the
		// leaf with the release; then lock, READ and WRITE the parent.
		{"insert + leaf split", func(c indexes.Client) error { return c.Insert(fresh2(495), key(9)) },
			want{reads: 3, writes: 5, cas: 1, faa: 3, readBytes: 2*leaf + uint64(l.InnerBytes)}},
		{"scan 100", func(c indexes.Client) error { return scanN(c, key(480), 100) }, want{reads: 104, readBytes: 4*leaf + 100*item}},
	}
	named := make([]indextest.Op[indexes.Client], len(ops))
	for i, o := range ops {
		named[i] = indextest.Op[indexes.Client]{Name: o.name, Do: o.do}
	}
	// Warm the cache (the root and level-1 node) and the item allocator's
	// chunk.
	warm := func(c indexes.Client, _ transport.Endpoint) {
		for _, i := range []uint64{hot, upd, del, fresh} {
			if err := expect(c, i, key(i)); err != nil {
				t.Error(err)
			}
		}
		if err := c.Update(key(hot), key(hot)); err != nil {
			t.Error(err)
		}
		for i := uint64(480); i < 495; i++ {
			if err := c.Insert(fresh2(i), key(i)); err != nil {
				t.Error(err)
			}
		}
	}
	for i, got := range indextest.VerbsPerOp(t, f, 1, x.NewClient, warm, named) {
		if err := ops[i].want.check(got); err != nil {
			t.Errorf("%s: %v", ops[i].name, err)
		}
	}
}

// fresh2 is a key between loaded keys i and i+1: new to its leaf.
func fresh2(i uint64) []byte { return binary.BigEndian.AppendUint64(nil, i*2+3) }

func expect(c indexes.Client, i uint64, v []byte) error {
	got, ok, err := c.Search(key(i))
	if err == nil && (!ok || string(got) != string(v)) {
		err = fmt.Errorf("search(%d) = %x, %v; want %x", i, got, ok, v)
	}
	return err
}

func absent(c indexes.Client, i uint64) error {
	got, ok, err := c.Search(key(i))
	if err == nil && ok {
		err = fmt.Errorf("search(%d) = %x, want absent", i, got)
	}
	return err
}

func notFound(err error) error {
	if err != indexes.ErrNotFound {
		return fmt.Errorf("got %v, want ErrNotFound", err)
	}
	return nil
}

func scanN(c indexes.Client, from []byte, n int) error {
	got := 0
	err := c.Scan(from, n, func(_, _ []byte) bool { got++; return true })
	if err == nil && got != n {
		err = fmt.Errorf("scan returned %d entries, want %d", got, n)
	}
	return err
}
