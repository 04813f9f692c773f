// Package wordmem is the memory of the real-time fabrics (local, tcp):
// regions of little-endian 64-bit words touched only through sync/atomic,
// with the memory modes' semantics (ModePaper's 64-byte cacheline
// atomicity through a table of line locks), and the tally that turns
// endpoints' verb counters into per-node statistics. Both fabrics use it,
// so a racing READ sees the same things on either.
package wordmem

import (
	"encoding/binary"
	"fmt"
	"sync/atomic"
	"unsafe"

	"github.com/dmbench/dmbench/transport"
	"github.com/dmbench/dmbench/transport/internal/regionmem"
)

// Region is the memory behind one registered region: little-endian 64-bit
// words, touched only through sync/atomic so that READ and WRITE may race
// with each other and with the atomics without a data race.
type Region struct {
	words   []uint64
	release func() error // returns words to the OS
	// id tells the regions of the fabric apart in the cacheline lock
	// table, so that equal offsets in two regions hash to different
	// stripes.
	id uint64
}

// NewRegion allocates size bytes of zeroed words; id tells the region apart
// from the fabric's others in the line-lock table.
func NewRegion(id, size uint64) (*Region, error) {
	n := (size + 7) / 8
	b, release, err := regionmem.Alloc(n * 8)
	if err != nil {
		return nil, fmt.Errorf("region of %d bytes: %w", size, err)
	}
	// Mapped memory is page-aligned, and heap byte slices of a word
	// multiple are 8-aligned, so the bytes can be viewed as words.
	words := unsafe.Slice((*uint64)(unsafe.Pointer(unsafe.SliceData(b))), n)
	return &Region{words: words, release: release, id: id}, nil
}

// Bytes is the region's memory as bytes, for a device that serves it on
// its own (an RDMA NIC registers it): Go code must keep to the atomic
// accessors, and the slice stays valid until Release.
func (r *Region) Bytes() []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(r.words))), len(r.words)*8)
}

// Release returns the region's memory to the OS.
func (r *Region) Release() error { return r.release() }

// load copies len(dst) bytes starting at byte offset off into dst.
func (r *Region) load(dst []byte, off uint64) {
	for len(dst) > 0 {
		w := atomic.LoadUint64(&r.words[off/8])
		shift := off % 8
		if shift == 0 && len(dst) >= 8 {
			binary.LittleEndian.PutUint64(dst, w)
			dst, off = dst[8:], off+8
			continue
		}
		n := min(8-shift, uint64(len(dst)))
		for i := range n {
			dst[i] = byte(w >> ((shift + i) * 8))
		}
		dst, off = dst[n:], off+n
	}
}

// store copies src to byte offset off. Whole words are stored; a partial
// word at either edge is merged into its neighbours' bytes with a CAS loop,
// so concurrent writers of the other bytes of that word are not undone.
func (r *Region) store(off uint64, src []byte) {
	for len(src) > 0 {
		p := &r.words[off/8]
		shift := off % 8
		if shift == 0 && len(src) >= 8 {
			atomic.StoreUint64(p, binary.LittleEndian.Uint64(src))
			src, off = src[8:], off+8
			continue
		}
		n := min(8-shift, uint64(len(src)))
		var mask, val uint64
		for i := range n {
			mask |= 0xff << ((shift + i) * 8)
			val |= uint64(src[i]) << ((shift + i) * 8)
		}
		for {
			old := atomic.LoadUint64(p)
			if atomic.CompareAndSwapUint64(p, old, old&^mask|val) {
				break
			}
		}
		src, off = src[n:], off+n
	}
}

// apply performs atomic op on the aligned word at byte offset off and
// returns the word's previous value. transport.Op.Apply defines the effect,
// so every fabric agrees on what CAS, masked CAS and FAA do.
func (r *Region) apply(off uint64, op *transport.Op) uint64 {
	p := &r.words[off/8]
	for {
		old := atomic.LoadUint64(p)
		next, changed := op.Apply(old)
		if !changed || atomic.CompareAndSwapUint64(p, old, next) {
			return old
		}
	}
}
