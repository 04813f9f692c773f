package dlsm

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"sort"

	"github.com/dmbench/dmbench/transport"
)

// Entry kinds, LevelDB's value types (the low byte of an internal key's
// trailer).
const (
	kindDelete byte = 0
	kindValue  byte = 1
)

// format is the byte-addressable SSTable format (dLSM section V,
// TABLE_STRATEGY 1 of the DMTree copy): every key-value pair is
// addressable on its own, the index block has one entry per pair, and a
// full bloom filter covers the table.
//
//	data entry  [4 klen][4 vlen][key ks][8 seq<<8|kind][value vs]  esz bytes
//	index entry [key ks][8 seq<<8|kind][4 offset][4 size]          ks+16 bytes
//	footer      [8 entries][8 index offset][8 filter offset][8 filter bytes]
type format struct {
	ks, vs    int
	esz       int // data entry bytes
	isz       int // index entry bytes
	bloomBits int
}

const footerBytes = 32

func newFormat(ks, vs, bloomBits int) format {
	return format{ks: ks, vs: vs, esz: 8 + ks + 8 + vs, isz: ks + 16, bloomBits: bloomBits}
}

// table is an SSTable in remote memory with its index block and filter
// held on the compute node (dLSM's table cache keeps them there).
type table struct {
	id    uint64
	addr  transport.GAddr // data region; index, filter and footer follow
	n     int
	keys  []byte // n keys of ks bytes, sorted
	kinds []byte // n kinds
	bloom bloom
	bytes uint64 // remote bytes: data, index, filter, footer

	// ref is the cache line of the reference counts of the table's
	// metadata (the control block of the artifact's
	// shared_ptr<RemoteMemTableMetaData>, which the version, the table
	// cache's Table and every Get share): a Get copies and locks that
	// pointer several times per table it consults, each an atomic
	// read-modify-write of this line by whichever core runs the Get.
	ref transport.Line
}

func (t *table) key(f *format, i int) []byte { return t.keys[i*f.ks : (i+1)*f.ks] }
func (t *table) smallest(f *format) []byte   { return t.key(f, 0) }
func (t *table) largest(f *format) []byte    { return t.key(f, t.n-1) }

// find returns the position of key in t, or ok false.
func (t *table) find(f *format, key []byte) (int, bool) {
	i := t.seek(f, key)
	return i, i < t.n && bytes.Equal(t.key(f, i), key)
}

// seek returns the first position whose key is >= key.
func (t *table) seek(f *format, key []byte) int {
	return sort.Search(t.n, func(i int) bool { return bytes.Compare(t.key(f, i), key) >= 0 })
}

// entryAddr is where entry i's bytes start in remote memory.
func (t *table) entryAddr(f *format, i int) transport.GAddr {
	return t.addr.Add(uint64(i * f.esz))
}

// localBytes is what the compute node keeps of t: index and filter.
func (t *table) localBytes() uint64 {
	return uint64(len(t.keys)+len(t.kinds)) + uint64(len(t.bloom.bits))
}

// record is one key-value pair on its way into a table.
type record struct {
	key  []byte
	kind byte
	seq  uint64
	val  []byte
}

// tableImage is a table serialised for remote memory.
type tableImage struct {
	data, index, tail []byte // tail: filter and footer
}

func (im *tableImage) size() uint64 { return uint64(len(im.data) + len(im.index) + len(im.tail)) }

// build serialises recs (sorted, one per key) into a table image and the
// compute-side table that describes it once written at addr.
func (f *format) build(recs []record) (*tableImage, *table) {
	n := len(recs)
	im := &tableImage{data: make([]byte, n*f.esz), index: make([]byte, n*f.isz)}
	t := &table{n: n, keys: make([]byte, n*f.ks), kinds: make([]byte, n)}
	keys := make([][]byte, n)
	for i, r := range recs {
		f.putEntry(im.data[i*f.esz:], r)
		ie := im.index[i*f.isz:]
		copy(ie, r.key)
		binary.LittleEndian.PutUint64(ie[f.ks:], r.seq<<8|uint64(r.kind))
		binary.LittleEndian.PutUint32(ie[f.ks+8:], uint32(i*f.esz))
		binary.LittleEndian.PutUint32(ie[f.ks+12:], uint32(f.esz))
		copy(t.keys[i*f.ks:], r.key)
		t.kinds[i] = r.kind
		keys[i] = r.key
	}
	t.bloom = newBloom(keys, f.bloomBits)
	im.tail = make([]byte, len(t.bloom.bits)+1+footerBytes)
	copy(im.tail, t.bloom.bits)
	im.tail[len(t.bloom.bits)] = byte(t.bloom.k)
	foot := im.tail[len(t.bloom.bits)+1:]
	binary.LittleEndian.PutUint64(foot, uint64(n))
	binary.LittleEndian.PutUint64(foot[8:], uint64(len(im.data)))
	binary.LittleEndian.PutUint64(foot[16:], uint64(len(im.data)+len(im.index)))
	binary.LittleEndian.PutUint64(foot[24:], uint64(len(t.bloom.bits)))
	t.bytes = im.size()
	return im, t
}

func (f *format) putEntry(dst []byte, r record) {
	binary.LittleEndian.PutUint32(dst, uint32(f.ks+8))
	binary.LittleEndian.PutUint32(dst[4:], uint32(f.vs))
	copy(dst[8:], r.key)
	binary.LittleEndian.PutUint64(dst[8+f.ks:], r.seq<<8|uint64(r.kind))
	copy(dst[16+f.ks:], r.val)
	clear(dst[16+f.ks+len(r.val) : f.esz])
}

// parseEntry decodes a data entry.
func (f *format) parseEntry(src []byte) (key []byte, kind byte, seq uint64, val []byte, err error) {
	if len(src) < f.esz || int(binary.LittleEndian.Uint32(src)) != f.ks+8 || int(binary.LittleEndian.Uint32(src[4:])) != f.vs {
		return nil, 0, 0, nil, fmt.Errorf("dlsm: corrupt data entry (lengths %d/%d, want %d/%d)",
			binary.LittleEndian.Uint32(src), binary.LittleEndian.Uint32(src[4:]), f.ks+8, f.vs)
	}
	tr := binary.LittleEndian.Uint64(src[8+f.ks:])
	return src[8 : 8+f.ks], byte(tr), tr >> 8, src[16+f.ks : f.esz], nil
}

// parseMeta rebuilds the compute-side table from the index block, filter
// and footer a compaction wrote (tail: index, filter, footer), as a table
// cache does when it opens a table.
func (f *format) parseMeta(addr transport.GAddr, n int, tail []byte) (*table, error) {
	if len(tail) < n*f.isz+1+footerBytes {
		return nil, fmt.Errorf("dlsm: table meta of %d bytes for %d entries", len(tail), n)
	}
	foot := tail[len(tail)-footerBytes:]
	if int(binary.LittleEndian.Uint64(foot)) != n {
		return nil, fmt.Errorf("dlsm: table footer says %d entries, compaction %d", binary.LittleEndian.Uint64(foot), n)
	}
	fb := int(binary.LittleEndian.Uint64(foot[24:]))
	t := &table{addr: addr, n: n, keys: make([]byte, n*f.ks), kinds: make([]byte, n)}
	for i := range n {
		ie := tail[i*f.isz:]
		copy(t.keys[i*f.ks:], ie[:f.ks])
		t.kinds[i] = byte(binary.LittleEndian.Uint64(ie[f.ks:]))
	}
	fl := tail[n*f.isz:]
	t.bloom = bloom{bits: append([]byte(nil), fl[:fb]...), k: int(fl[fb])}
	t.bytes = uint64(n*f.esz + len(tail))
	return t, nil
}
