package rolex

import (
	"bytes"
	"math/bits"

	"github.com/dmbench/dmbench/internal/keyorder"
)

// keyWords searches sorted keys of one size by integer compares. Every
// search of the warm-up (each compute node searches every record) looks
// up the model's segment and the key's fence, and bytes.Compare over
// arrays of 24-byte keys was a fifth of the simulator's time. Every key
// starts with prefix, the bytes the first and last key share, and words
// holds each key's next 8 bytes, big-endian and zero padded, in an array
// a third the size of the keys. Keys whose words differ order as their
// words do (hashed keys differ in their first 8 bytes, ordered ones right
// after their shared leading zeros); equal words fall back to the keys
// themselves. A search starts from the keys whose words share the probe's
// top bits, which starts lists: the words' top bits are about uniform
// (they start where the first and last key differ), so that is a key or
// two, where a search of all of them missed the processor's caches
// several times.
type keyWords struct {
	keys   []byte
	size   int
	prefix []byte
	words  []uint64
	shift  uint  // a word's top bits are word >> shift
	starts []int // starts[j]: the first key whose word's top bits are j or more
}

// maxTopBits bounds starts at 2^16+1 entries.
const maxTopBits = 16

func newKeyWords(keys []byte, size int) keyWords {
	n := len(keys) / size
	w := keyWords{keys: keys, size: size, words: make([]uint64, n)}
	p := 0
	if n > 0 {
		p = keyorder.CommonPrefix(keys[:size], keys[(n-1)*size:])
	}
	w.prefix = keys[:p]
	for i := range w.words {
		w.words[i] = keyorder.Word(keys[i*size:(i+1)*size], p)
	}
	b := min(max(bits.Len(uint(n))-1, 1), maxTopBits)
	w.shift = uint(64 - b)
	w.starts = make([]int, 1<<b+1)
	j := 0
	for i, wd := range w.words {
		for ; j <= int(wd>>w.shift); j++ {
			w.starts[j] = i
		}
	}
	for ; j < len(w.starts); j++ {
		w.starts[j] = n
	}
	return w
}

// probe is a key to compare with the keys: side is -1 or +1 when it
// orders below or above all of them by their shared prefix, 0 when it
// starts with that prefix; word is then its word.
type probe struct {
	key  []byte
	side int
	word uint64
}

func (w *keyWords) probe(key []byte) probe {
	p := probe{key: key, side: bytes.Compare(key[:min(len(key), len(w.prefix))], w.prefix)}
	if p.side == 0 {
		p.word = keyorder.Word(key, len(w.prefix))
	}
	return p
}

// compare orders key i against the probe as bytes.Compare does.
func (w *keyWords) compare(i int, p probe) int {
	switch wi := w.words[i]; {
	case p.side != 0:
		return -p.side
	case wi < p.word:
		return -1
	case wi > p.word:
		return 1
	}
	return bytes.Compare(w.keys[i*w.size:(i+1)*w.size], p.key)
}

// first returns the first key that orders above the probe, or at or
// above it with orEqual; the number of keys if there is none. Keys whose
// top bits are below the probe's order below it and those whose top bits
// are above it order above it, so it searches the keys between.
func (w *keyWords) first(p probe, orEqual bool) int {
	switch {
	case p.side < 0:
		return 0
	case p.side > 0:
		return len(w.words)
	}
	j := p.word >> w.shift
	return w.search(p, orEqual, w.starts[j], w.starts[j+1])
}

// search is first within keys [lo, hi): hi if none there qualifies.
func (w *keyWords) search(p probe, orEqual bool, lo, hi int) int {
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if c := w.compare(m, p); c > 0 || orEqual && c == 0 {
			hi = m
		} else {
			lo = m + 1
		}
	}
	return lo
}
