package dlsm

import "github.com/dmbench/dmbench/cost"

// bloom is a table's full filter: bitsPerKey bits per key and k probes by
// double hashing, LevelDB's bloom policy (dLSM's default 10 bits per key).
// The hash is FNV-1a, deterministic across processes (the shared
// cost.Hash is seeded per process), so false positives, and the work
// they cost, are the same on every run.
type bloom struct {
	bits []byte
	k    int
}

func newBloom(keys [][]byte, bitsPerKey int) bloom {
	k := max(1, min(30, bitsPerKey*69/100))
	nbits := max(64, len(keys)*bitsPerKey)
	b := bloom{bits: make([]byte, (nbits+7)/8), k: k}
	nbits = len(b.bits) * 8
	for _, key := range keys {
		h := bloomHash(key)
		delta := h>>17 | h<<15
		for range k {
			pos := h % uint32(nbits)
			b.bits[pos/8] |= 1 << (pos % 8)
			h += delta
		}
	}
	return b
}

// mayContain probes the filter.
func (b *bloom) mayContain(key []byte) bool {
	nbits := uint32(len(b.bits) * 8)
	if nbits == 0 {
		return true
	}
	h := bloomHash(key)
	delta := h>>17 | h<<15
	for range b.k {
		pos := h % nbits
		if b.bits[pos/8]&(1<<(pos%8)) == 0 {
			return false
		}
		h += delta
	}
	return true
}

// probeCost is one filter probe: a key hash and k bit tests.
func (b *bloom) probeCost() int64 { return cost.HashKey() + cost.FingerprintProbe(b.k) }

func bloomHash(key []byte) uint32 {
	h := uint32(2166136261)
	for _, c := range key {
		h ^= uint32(c)
		h *= 16777619
	}
	return h
}
