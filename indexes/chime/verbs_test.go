package chime

import (
	"encoding/binary"
	"fmt"
	"iter"
	"testing"

	"github.com/dmbench/dmbench/indexes"
	"github.com/dmbench/dmbench/indexes/indextest"
	"github.com/dmbench/dmbench/transport"
	"github.com/dmbench/dmbench/transport/sim"
)

func key(i uint64) []byte { return binary.BigEndian.AppendUint64(nil, i*2+2) }

func load(n uint64) iter.Seq2[[]byte, []byte] { return indextest.Pairs(n, key, key) }

func build(t *testing.T, f transport.Fabric, raw map[string]string) *Chime {
	t.Helper()
	return indextest.Build(t, "chime", indexes.Env{Fabric: f, KeySize: 8, ValueSize: 8, CacheBytes: 4 << 20}, raw).(*Chime)
}

// unwrapped returns a loaded key whose neighbourhood does not wrap past
// the leaf's end, skipping skip.
func unwrapped(g *geometry, from uint64, skip map[uint64]bool) uint64 {
	for i := from; ; i++ {
		if !skip[i] && g.home(key(i))+g.nbr <= g.span {
			return i
		}
	}
}

func neighbourhoodBytes(g *geometry, k []byte) uint64 {
	var n uint64
	for _, s := range g.segments(g.home(k), g.nbr) {
		n += uint64(s.hi - s.lo)
	}
	return n
}

// Golden verb counts with a warm cache: the sequences doc.go lists.
func TestVerbsPerOperation(t *testing.T) {
	for _, masked := range []bool{true, false} {
		t.Run(fmt.Sprintf("maskedcas=%v", masked), func(t *testing.T) {
			cfg := transport.Config{ComputeNodes: 1, MemoryNodes: 1, Threads: 1, MemoryCores: 1, ComputeCores: 1, MemoryBytes: 64 << 20}
			f, err := sim.New(cfg, sim.CX6)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			x := build(t, f, map[string]string{"span": "32", "maskedcas": fmt.Sprint(masked)})
			if err := x.BulkLoad(f.Setup(1), load(1000)); err != nil {
				t.Fatal(err)
			}
			g := &x.g
			used := map[uint64]bool{}
			pick := func(from uint64) uint64 { i := unwrapped(g, from, used); used[i] = true; return i }
			hot, upd, del := pick(100), pick(200), pick(300)
			lockKind := transport.VerbMaskedCAS
			if !masked {
				lockKind = transport.VerbCAS
			}
			// The speculative READ moves exactly the slot the hotspot
			// buffer remembers (17 or 18 bytes: slots that open a
			// cacheline own its version byte).
			entryBytes := func(k []byte) uint64 {
				slot := hotSlots(x.hot[1], k, false)
				lo, hi := g.slotRange(slot)
				return uint64(hi - lo)
			}

			type op struct {
				name string
				do   func(c indexes.Client) error
				want func(c transport.Counters) error
			}
			exact := func(kind transport.VerbKind, n, out, in uint64) func(transport.Counters) error {
				return func(got transport.Counters) error {
					if got[kind] != (transport.VerbCount{Count: n, BytesOut: out, BytesIn: in}) || got.Verbs() != n {
						return fmt.Errorf("got %+v, want only %d %v of %d/%d bytes", got, n, kind, out, in)
					}
					return nil
				}
			}
			// A write: the lock, READ of the neighbourhood, WRITE of the
			// entry (and the version byte of a cacheline it opens) and
			// unlocking WRITE. Without masked CAS the lock is a
			// CAS of its own word, and a writer that keeps the vacancy
			// bitmap (insert, delete) READs the bitmap word after it and
			// unlocks both words with one 16-byte WRITE.
			write := func(k []byte, bitmap, speculative bool) func(transport.Counters) error {
				reads, readBytes, unlockBytes := uint64(1), neighbourhoodBytes(g, k), uint64(8)
				if speculative {
					readBytes = entryBytes(k)
				}
				if !masked && bitmap {
					reads, readBytes, unlockBytes = 2, readBytes+8, 16
				}
				return func(got transport.Counters) error {
					if got[lockKind].Count != 1 || got[transport.VerbRead].Count != reads ||
						got[transport.VerbRead].BytesIn != readBytes || got[transport.VerbWrite].Count != 2 ||
						got[transport.VerbWrite].BytesOut-unlockBytes < uint64(g.entry) || got[transport.VerbWrite].BytesOut-unlockBytes > uint64(g.entry+1) ||
						got.Verbs() != 3+reads {
						return fmt.Errorf("got %+v, want 1 %v, %d READs of %d bytes, 2 WRITEs: the entry (%d-%d bytes) and %d bytes of lock", got, lockKind, reads, readBytes, g.entry, g.entry+1, unlockBytes)
					}
					return nil
				}
			}
			insertReads := uint64(1)
			if !masked {
				insertReads = 2
			}
			ops := []op{
				{"search", func(c indexes.Client) error { return expect(c, hot) },
					exact(transport.VerbRead, 1, 0, neighbourhoodBytes(g, key(hot)))},
				{"speculative search", func(c indexes.Client) error { return expect(c, hot) },
					func(got transport.Counters) error {
						return exact(transport.VerbRead, 1, 0, entryBytes(key(hot)))(got)
					}},
				{"update", func(c indexes.Client) error { return c.Update(key(upd), key(7)) }, write(key(upd), false, false)},
				{"speculative update", func(c indexes.Client) error { return c.Update(key(upd), key(8)) },
					func(got transport.Counters) error { return write(key(upd), false, true)(got) }},
				{"delete", func(c indexes.Client) error { return c.Delete(key(del)) }, write(key(del), true, false)},
				{"insert", func(c indexes.Client) error { return c.Insert(key(del), key(del)) },
					func(got transport.Counters) error {
						if got[lockKind].Count != 1 || got[transport.VerbRead].Count != insertReads || got[transport.VerbWrite].Count < 2 {
							return fmt.Errorf("got %+v, want 1 %v, %d READs, >= 2 WRITEs", got, lockKind, insertReads)
						}
						return nil
					}},
			}
			named := make([]indextest.Op[indexes.Client], len(ops))
			for i, o := range ops {
				named[i] = indextest.Op[indexes.Client]{Name: o.name, Do: o.do}
			}
			// Warm the cache: root and level-1 node.
			warm := func(c indexes.Client, ep transport.Endpoint) {
				for _, i := range []uint64{hot, upd, del} {
					if err := expect(c, i); err != nil {
						t.Error(err)
					}
				}
				hotSlots(x.hot[ep.Node()], key(hot), true)
				hotSlots(x.hot[ep.Node()], key(upd), true)
			}
			for i, got := range indextest.VerbsPerOp(t, f, 1, x.NewClient, warm, named) {
				if err := ops[i].want(got); err != nil {
					t.Errorf("%s: %v", ops[i].name, err)
				}
			}
		})
	}
}

func expect(c indexes.Client, i uint64) error {
	v, ok, err := c.Search(key(i))
	if err == nil && (!ok || string(v) != string(key(i))) {
		err = fmt.Errorf("search(%d) = %x, %v", i, v, ok)
	}
	return err
}

// hotSlots returns the slot the hotspot buffer remembers for k's
// fingerprint (-1 if none), dropping every such entry when drop is set.
func hotSlots(h *hotspotBuffer, k []byte, drop bool) int {
	fp := hotFingerprint(k)
	slot := -1
	for b := range h.buckets {
		for i := range h.buckets[b] {
			if e := &h.buckets[b][i]; e.leaf != 0 && e.fp == fp {
				slot = int(e.slot)
				if drop {
					*e = hotEntry{}
				}
			}
		}
	}
	return slot
}

// Golden verb counts of scans with a warm cache, on dense keys (DMTree's
// scan workloads), so that the interval [start, start+n) holds n keys: a
// scan of one key READs its neighbourhood, or once the hotspot buffer
// knows its slot that one entry; a scan whose interval is exactly two
// leaves READs both whole in one doorbell.
func TestScanVerbs(t *testing.T) {
	cfg := transport.Config{ComputeNodes: 1, MemoryNodes: 1, Threads: 1, MemoryCores: 1, ComputeCores: 1, MemoryBytes: 64 << 20}
	f, err := sim.New(cfg, sim.CX6)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	x := build(t, f, map[string]string{"span": "32"})
	dense := func(i uint64) []byte { return binary.BigEndian.AppendUint64(nil, i+1) }
	if err := x.BulkLoad(f.Setup(1), indextest.Pairs(1000, dense, dense)); err != nil {
		t.Fatal(err)
	}
	g := &x.g
	one := uint64(400)
	for g.home(dense(one))+g.nbr > g.span {
		one++
	}
	var lo []byte // a separator of the level-1 node: two leaves from it
	var two int
	scan := func(start []byte, n int) func(c indexes.Client) error {
		return func(c indexes.Client) error {
			got := 0
			err := c.Scan(start, n, func(k, _ []byte) bool {
				if want := binary.BigEndian.Uint64(start) + uint64(got); binary.BigEndian.Uint64(k) != want {
					t.Errorf("scan from %x: entry %d is %x", start, got, k)
				}
				got++
				return true
			})
			if err == nil && got != n {
				err = fmt.Errorf("scan from %x: %d entries, want %d", start, got, n)
			}
			return err
		}
	}
	ops := []indextest.Op[indexes.Client]{
		{Name: "scan of 1", Do: func(c indexes.Client) error { return scan(dense(one), 1)(c) }},
		{Name: "speculative scan of 1", Do: func(c indexes.Client) error { return scan(dense(one), 1)(c) }},
		{Name: "scan of two leaves", Do: func(c indexes.Client) error { return scan(lo, two)(c) }},
	}
	warm := func(c indexes.Client, ep transport.Endpoint) {
		if _, _, err := c.Search(dense(700)); err != nil {
			t.Fatal(err)
		}
		n := x.caches[ep.Node()].find(1, dense(700))
		i := n.upper(dense(700))
		lo = n.keys[i]
		two = int(binary.BigEndian.Uint64(n.keys[i+2]) - binary.BigEndian.Uint64(lo))
	}
	got := indextest.VerbsPerOp(t, f, 1, x.NewClient, warm, ops)
	whole := g.segments(0, g.span)[0]
	// The first scan recorded the key's slot in the hotspot buffer.
	entryLo, entryHi := g.slotRange(hotSlots(x.hot[1], dense(one), false))
	want := []transport.VerbCount{
		{Count: 1, BytesIn: neighbourhoodBytes(g, dense(one))},
		{Count: 1, BytesIn: uint64(entryHi - entryLo)},
		{Count: 2, BytesIn: 2 * uint64(whole.hi-whole.lo)},
	}
	for i, w := range want {
		if got[i][transport.VerbRead] != w || got[i].Verbs() != w.Count {
			t.Errorf("%s: got %+v, want only %d READs of %d bytes", ops[i].Name, got[i], w.Count, w.BytesIn)
		}
	}
}
