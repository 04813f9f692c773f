package sim

import (
	"encoding/binary"
	"hash/maphash"
)

// digestSeed seeds MemoryDigest: one seed per process, so digests compare
// within a process and are never saved.
var digestSeed = maphash.MakeSeed()

// MemoryDigest hashes every byte of every region of every node, with the
// regions' sizes. Two fabrics with equal digests hold the same memory (up
// to a 64-bit hash collision): a runner checks that two bulk loads left
// the same memory before it gives caches one index instance warmed to
// another (bench.Warm). Digests compare within one process only.
func (f *Fabric) MemoryDigest() uint64 {
	var h maphash.Hash
	h.SetSeed(digestSeed)
	var size [8]byte
	for _, nd := range f.nodes {
		for _, m := range nd.mem {
			binary.LittleEndian.PutUint64(size[:], uint64(len(m)))
			h.Write(size[:])
			h.Write(m)
		}
	}
	return h.Sum64()
}
