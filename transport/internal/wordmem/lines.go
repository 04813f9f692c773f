package wordmem

import (
	"sync"
	"unsafe"

	"github.com/dmbench/dmbench/transport"
)

// stripeBits sizes the cacheline lock table: 4096 stripes keep collisions
// between unrelated lines rare at the thread counts of one machine while
// the table stays at 256 KiB.
const stripeBits = 12

// stripe is one lock of the table, padded to its own cacheline so that
// neighbouring stripes do not share one.
type stripe struct {
	sync.RWMutex
	_ [transport.CachelineBytes - unsafe.Sizeof(sync.RWMutex{})]byte
}

// lineLocks gives ModePaper its 64-byte cacheline atomicity: an access
// holds the stripe of each line it touches while it copies that line.
type lineLocks struct {
	stripes [1 << stripeBits]stripe
}

// of returns the stripe of line (a cacheline index) of region id.
func (l *lineLocks) of(id, line uint64) *stripe {
	// Fibonacci hashing spreads consecutive lines, and the same line of
	// different regions, over the whole table.
	h := (id<<40 ^ line) * 0x9e3779b97f4a7c15
	return &l.stripes[h>>(64-stripeBits)]
}

// Memory applies accesses to regions under a fabric's memory mode.
type Memory struct {
	locks *lineLocks // nil in ModeStrict
}

// NewMemory applies accesses under mode.
func NewMemory(mode transport.Mode) Memory {
	if mode == transport.ModePaper {
		return Memory{locks: new(lineLocks)}
	}
	return Memory{}
}

// Read copies [off, off+len(dst)) of r into dst.
func (m Memory) Read(r *Region, off uint64, dst []byte) {
	if m.locks == nil {
		r.load(dst, off)
		return
	}
	for len(dst) > 0 {
		n := lineRest(off, uint64(len(dst)))
		s := m.locks.of(r.id, off/transport.CachelineBytes)
		s.RLock()
		r.load(dst[:n], off)
		s.RUnlock()
		dst, off = dst[n:], off+n
	}
}

// Write copies src to [off, off+len(src)) of r, line by line in increasing
// address order.
func (m Memory) Write(r *Region, off uint64, src []byte) {
	if m.locks == nil {
		r.store(off, src)
		return
	}
	for len(src) > 0 {
		n := lineRest(off, uint64(len(src)))
		s := m.locks.of(r.id, off/transport.CachelineBytes)
		s.Lock()
		r.store(off, src[:n])
		s.Unlock()
		src, off = src[n:], off+n
	}
}

// Atomic performs op on the word at off. In ModePaper it also excludes
// READs of the word's line, so a READ sees a line either before or after
// the atomic, as it would with a WRITE.
func (m Memory) Atomic(r *Region, off uint64, op *transport.Op) uint64 {
	if m.locks == nil {
		return r.apply(off, op)
	}
	s := m.locks.of(r.id, off/transport.CachelineBytes)
	s.Lock()
	defer s.Unlock()
	return r.apply(off, op)
}

// Target is where a checked op lands: a region and the byte offset of the
// op's address in it.
type Target struct {
	Region *Region
	Off    uint64
}

// Exec runs op o at t: a READ into dst, a WRITE from o.Buf, an atomic
// leaving the word's old value in o.Old.
func (m Memory) Exec(t Target, o *transport.Op, dst []byte) {
	switch o.Kind {
	case transport.VerbRead:
		m.Read(t.Region, t.Off, dst)
	case transport.VerbWrite:
		m.Write(t.Region, t.Off, o.Buf)
	default:
		o.Old = m.Atomic(t.Region, t.Off, o)
	}
}

// lineRest is how many of n bytes from off lie in off's cacheline.
func lineRest(off, n uint64) uint64 {
	return min(n, transport.CachelineBytes-off%transport.CachelineBytes)
}
