package ideal

import (
	"bytes"
	"encoding/binary"

	"github.com/google/btree"

	"github.com/dmbench/dmbench/transport"
)

// directory is the oracle: where every key's slot is and whether it is
// live. Searches, the hot path of every run, find a key by hash in O(1);
// the key order, needed by scans and to insert, is a B-tree of the keys'
// first 24 bytes as three integers, so that ordering compares integers and
// touches the key bytes only to break a tie (keys longer than 24 bytes).
// Ordered keys differ only in their last bytes, so the prefix must reach
// them: a scan starts at its own key instead of at the first key sharing
// a shorter prefix. Keys are fixed-width and kept
// packed in one array, so a key costs its own bytes, not a string header
// and an allocation. Nothing here depends on map order or hash seeds:
// lookups find the same entry whatever the table's layout.
type directory struct {
	klen  int
	keys  []byte   // key of entry i at [i*klen, (i+1)*klen)
	slots []entry  // per entry
	table []uint64 // open addressing: hash tag << 32 | entry+1; 0 = empty
	order *btree.BTreeG[ordered]
}

// entry is the oracle's record of one key.
type entry struct {
	addr transport.GAddr
	live bool
}

// ordered is a key's place in key order: its first 24 bytes big-endian
// (zero-padded), and its entry for the rest.
type ordered struct {
	w  [prefixWords]uint64
	id uint32
}

// prefixWords is how many leading 8-byte words of a key ordered holds.
const prefixWords = 3

// newDirectory makes a directory with room for records keys before it
// grows: growing a slice of 10^7 keys copies it several times over.
func newDirectory(klen int, records uint64) *directory {
	size := 1024
	for 3*uint64(size) <= 4*(records+1) {
		size *= 2
	}
	d := &directory{
		klen:  klen,
		keys:  make([]byte, 0, records*uint64(klen)),
		slots: make([]entry, 0, records),
		table: make([]uint64, size),
	}
	d.order = btree.NewG(32, d.less)
	return d
}

func (d *directory) key(id uint32) []byte {
	return d.keys[int(id)*d.klen : int(id+1)*d.klen]
}

func (d *directory) less(a, b ordered) bool {
	for i := range a.w {
		if a.w[i] != b.w[i] {
			return a.w[i] < b.w[i]
		}
	}
	switch {
	case d.klen <= 8*prefixWords || a.id == b.id:
		return false
	case a.id == pivotID: // a pivot sorts first among equal prefixes
		return true
	case b.id == pivotID:
		return false
	}
	return bytes.Compare(d.key(a.id)[8*prefixWords:], d.key(b.id)[8*prefixWords:]) < 0
}

// pivotID marks the ordered item a scan starts from.
const pivotID = ^uint32(0)

// prefix is key's first 24 bytes as big-endian integers, zero-padded.
func prefix(key []byte) (w [prefixWords]uint64) {
	var p [8 * prefixWords]byte
	copy(p[:], key)
	for i := range w {
		w[i] = binary.BigEndian.Uint64(p[8*i:])
	}
	return w
}

// hashKey mixes every byte of key (SplitMix64's finaliser per word).
func hashKey(key []byte) uint64 {
	h := uint64(len(key)) * 0x9e3779b97f4a7c15
	for len(key) >= 8 {
		h = mix(h ^ binary.LittleEndian.Uint64(key))
		key = key[8:]
	}
	if len(key) > 0 {
		var w [8]byte
		copy(w[:], key)
		h = mix(h ^ binary.LittleEndian.Uint64(w[:]))
	}
	return h
}

func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}

// find returns the table position of key and its entry, or the empty
// position where it would go and false.
func (d *directory) find(key []byte) (pos int, id uint32, ok bool) {
	h := hashKey(key)
	tag := h >> 32
	mask := len(d.table) - 1
	for i := int(h) & mask; ; i = (i + 1) & mask {
		t := d.table[i]
		if t == 0 {
			return i, 0, false
		}
		if t>>32 == tag && bytes.Equal(d.key(uint32(t)-1), key) {
			return i, uint32(t) - 1, true
		}
	}
}

// get returns the entry of key.
func (d *directory) get(key []byte) (entry, bool) {
	if len(key) != d.klen {
		return entry{}, false
	}
	_, id, ok := d.find(key)
	if !ok {
		return entry{}, false
	}
	return d.slots[id], true
}

// put records e for key, which must be klen bytes long, and reports
// whether the key is new.
func (d *directory) put(key []byte, e entry) bool {
	pos, id, ok := d.find(key)
	if ok {
		d.slots[id] = e
		return false
	}
	id = uint32(len(d.slots))
	d.keys = append(d.keys, key...)
	d.slots = append(d.slots, e)
	d.table[pos] = hashKey(key)>>32<<32 | uint64(id+1)
	d.order.ReplaceOrInsert(ordered{prefix(key), id})
	if 4*len(d.slots) >= 3*len(d.table) {
		d.grow()
	}
	return true
}

// grow doubles the table, keeping it at most three-quarters full.
func (d *directory) grow() {
	table := make([]uint64, 2*len(d.table))
	mask := len(table) - 1
	for _, t := range d.table {
		if t == 0 {
			continue
		}
		i := int(hashKey(d.key(uint32(t)-1))) & mask
		for table[i] != 0 {
			i = (i + 1) & mask
		}
		table[i] = t
	}
	d.table = table
}

// ascend calls fn with the key and entry of every key from from on (after
// from when not inclusive) in key order, until fn returns false. The key
// is valid only during the call.
func (d *directory) ascend(from []byte, inclusive bool, fn func(key []byte, e entry) bool) {
	// The pivot sorts before every key with from's first 24 bytes; the
	// few of those that sort before from (keys longer than 24 bytes) are
	// skipped here.
	d.order.AscendGreaterOrEqual(ordered{prefix(from), pivotID}, func(o ordered) bool {
		k := d.key(o.id)
		c := bytes.Compare(k, from)
		if c < 0 || c == 0 && !inclusive {
			return true
		}
		return fn(k, d.slots[o.id])
	})
}

// size is the number of keys recorded, live or not.
func (d *directory) size() int { return len(d.slots) }
