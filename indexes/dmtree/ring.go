package dmtree

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"slices"

	"github.com/dmbench/dmbench/transport"
)

// ring is a consistent-hashing ring over the live compute nodes, each
// with vnodes virtual nodes (DMTree section 3.2.3): the primary of a
// fingerprint table is the first virtual node clockwise of the hash of the
// table's offset. Removing a node moves only its tables. Hashing is FNV
// and splitmix, never a process-seeded hash, so placement is the same in
// every run. A ring is immutable; membership changes swap in a new one.
type ring struct {
	members []transport.NodeID
	vnodes  int
	points  []point // sorted by hash
}

type point struct {
	hash uint64
	node transport.NodeID
}

func newRing(members []transport.NodeID, vnodes int) (*ring, error) {
	if len(members) == 0 {
		return nil, fmt.Errorf("consistent-hashing ring with no compute node")
	}
	r := &ring{members: slices.Clone(members), vnodes: vnodes}
	for _, n := range members {
		for v := range vnodes {
			h := fnv.New64a()
			var b [10]byte
			binary.LittleEndian.PutUint16(b[:], uint16(n))
			binary.LittleEndian.PutUint64(b[2:], uint64(v))
			h.Write(b[:])
			r.points = append(r.points, point{hash: mix(h.Sum64()), node: n})
		}
	}
	slices.SortFunc(r.points, func(a, b point) int {
		switch {
		case a.hash < b.hash:
			return -1
		case a.hash > b.hash:
			return 1
		}
		return int(a.node) - int(b.node)
	})
	return r, nil
}

// mix is splitmix64's finaliser: it spreads table offsets, which are
// multiples of the table size, over the ring.
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}

// lookup returns the primary node of the table at offset off: the first
// point whose hash is at least off's. Every search looks up its table's
// primary, and the bisection written out compares in line, where
// slices.BinarySearchFunc calls a function per step.
func (r *ring) lookup(off uint64) transport.NodeID {
	h := mix(off)
	i, j := 0, len(r.points)
	for i < j {
		m := int(uint(i+j) >> 1)
		if r.points[m].hash < h {
			i = m + 1
		} else {
			j = m
		}
	}
	if i == len(r.points) {
		i = 0
	}
	return r.points[i].node
}

// without is the ring after node n leaves.
func (r *ring) without(n transport.NodeID) (*ring, error) {
	if !slices.Contains(r.members, n) {
		return nil, fmt.Errorf("compute node %d is not on the ring (members %v)", n, r.members)
	}
	return newRing(slices.DeleteFunc(slices.Clone(r.members), func(m transport.NodeID) bool { return m == n }), r.vnodes)
}
