package dex

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/bits"
	"slices"
)

// partitions is one immutable assignment of key ranges to compute nodes
// (section 4): compute node i owns [bounds[i], bounds[i+1]). A
// repartitioning installs a new one.
type partitions struct {
	bounds [][]byte
}

// newPartitions takes the runner's lower bounds, or splits the 8-byte key
// prefix space equally (section 8.1) when there are none.
func newPartitions(given [][]byte, nodes, ks int) (*partitions, error) {
	p := &partitions{}
	if given != nil {
		if len(given) != nodes {
			return nil, fmt.Errorf("dex: %d partition bounds for %d compute nodes", len(given), nodes)
		}
		for i, b := range given {
			if len(b) != ks {
				return nil, fmt.Errorf("dex: partition bound %d is %d bytes, keys are %d", i, len(b), ks)
			}
			if i > 0 && bytes.Compare(given[i-1], b) >= 0 {
				return nil, fmt.Errorf("dex: partition bounds not increasing at %d", i)
			}
			p.bounds = append(p.bounds, bytes.Clone(b))
		}
		return p, nil
	}
	for i := range nodes {
		b := make([]byte, ks)
		// ceil(i * 2^64 / nodes) as a big-endian prefix.
		q, r := bits.Div64(uint64(i), 0, uint64(nodes))
		if r != 0 {
			q++
		}
		var pre [8]byte
		binary.BigEndian.PutUint64(pre[:], q)
		copy(b, pre[:min(8, ks)])
		p.bounds = append(p.bounds, b)
	}
	return p, nil
}

// owner is the index of the compute node owning key.
func (p *partitions) owner(key []byte) int {
	i, found := slices.BinarySearchFunc(p.bounds, key, bytes.Compare)
	if found {
		return i
	}
	return max(i-1, 0)
}

// shared reports whether [low, high) crosses a partition boundary (high
// nil is +infinity): such nodes are read with the RDMA optimistic lock and
// written under RDMA locks.
func (p *partitions) shared(low, high []byte) bool {
	i, _ := slices.BinarySearchFunc(p.bounds, low, bytes.Compare)
	// bounds[i] is the first bound >= low; skip one equal to low.
	if i < len(p.bounds) && bytes.Equal(p.bounds[i], low) {
		i++
	}
	return i < len(p.bounds) && (high == nil || bytes.Compare(p.bounds[i], high) < 0)
}

// next is the lower bound of the partition after owner's, nil for the last.
func (p *partitions) next(owner int) []byte {
	if owner+1 < len(p.bounds) {
		return p.bounds[owner+1]
	}
	return nil
}
