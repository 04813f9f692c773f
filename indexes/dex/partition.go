package dex

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/bits"
	"slices"

	"github.com/dmbench/dmbench/indexes/internal/keycmp"
)

// partitions is one immutable assignment of key ranges to compute nodes
// (section 4): range i is [lows[i], lows[i+1]), the last one unbounded,
// and compute node owners[i] owns it. Adjacent ranges have different
// owners, so every bound separates two compute nodes; a compute node may
// own several ranges, or none (a spare). A repartitioning installs a new
// one, numbered by version: how many repartitionings made it, the number
// under which it is published in memory (table.go).
type partitions struct {
	lows    [][]byte
	owners  []int
	version uint64
}

// newPartitions takes the runner's lower bounds, owned by the first
// len(given) of nodes compute nodes in order (the rest are spares), or
// splits the 8-byte key prefix space equally among all of them (section
// 8.1) when there are none.
func newPartitions(given [][]byte, nodes, ks int) (*partitions, error) {
	p := &partitions{}
	if given != nil {
		if len(given) == 0 || len(given) > nodes {
			return nil, fmt.Errorf("dex: %d partition bounds for %d compute nodes: want 1 to %d", len(given), nodes, nodes)
		}
		for i, b := range given {
			if len(b) != ks {
				return nil, fmt.Errorf("dex: partition bound %d is %d bytes, keys are %d", i, len(b), ks)
			}
			if i > 0 && bytes.Compare(given[i-1], b) >= 0 {
				return nil, fmt.Errorf("dex: partition bounds not increasing at %d", i)
			}
			p.lows = append(p.lows, bytes.Clone(b))
			p.owners = append(p.owners, i)
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
		p.lows = append(p.lows, b)
		p.owners = append(p.owners, i)
	}
	return p, nil
}

// index is the position of the range holding key; keys below the first
// bound belong to the first range.
func (p *partitions) index(key []byte) int {
	i, found := slices.BinarySearchFunc(p.lows, key, keycmp.Compare)
	if found {
		return i
	}
	return max(i-1, 0)
}

// owner is the index of the compute node owning key.
func (p *partitions) owner(key []byte) int { return p.owners[p.index(key)] }

// bounds is range i as [low, high), high nil for +infinity.
func (p *partitions) bounds(i int) (low, high []byte) {
	if i+1 < len(p.lows) {
		return p.lows[i], p.lows[i+1]
	}
	return p.lows[i], nil
}

// limit is the end of the range holding key: the first key another
// compute node owns, nil when the range is the last.
func (p *partitions) limit(key []byte) []byte {
	_, high := p.bounds(p.index(key))
	return high
}

// shared reports whether [low, high) crosses a partition boundary (high
// nil is +infinity): such nodes are read with the RDMA optimistic lock and
// written under RDMA locks.
func (p *partitions) shared(low, high []byte) bool {
	i, _ := slices.BinarySearchFunc(p.lows, low, keycmp.Compare)
	// lows[i] is the first bound >= low; skip one equal to low.
	if i < len(p.lows) && bytes.Equal(p.lows[i], low) {
		i++
	}
	return i < len(p.lows) && (high == nil || keycmp.Compare(p.lows[i], high) < 0)
}

// move returns the partitions with [bound, high) of the range holding
// bound, which from must own, given to compute node to, and that moved
// range. Ranges of one owner that become adjacent are joined.
func (p *partitions) move(from, to int, bound []byte) (*partitions, keyRange, error) {
	i := p.index(bound)
	low, high := p.bounds(i)
	if p.owners[i] != from || bytes.Compare(bound, low) <= 0 {
		return nil, keyRange{}, fmt.Errorf("dex: bound %x is not inside a range of compute node %d (range [%x, %x) is compute node %d's)",
			bound, from, low, high, p.owners[i])
	}
	q := &partitions{version: p.version + 1}
	add := func(low []byte, owner int) {
		if n := len(q.owners); n > 0 && q.owners[n-1] == owner {
			return
		}
		q.lows = append(q.lows, low)
		q.owners = append(q.owners, owner)
	}
	for j := range p.lows {
		add(p.lows[j], p.owners[j])
		if j == i {
			add(bytes.Clone(bound), to)
		}
	}
	return q, keyRange{low: bound, high: high}, nil
}

// keyRange is the keys [low, high), high nil for +infinity.
type keyRange struct {
	low, high []byte
}

func (r *keyRange) contains(key []byte) bool {
	return keycmp.Compare(key, r.low) >= 0 && (r.high == nil || keycmp.Compare(key, r.high) < 0)
}

// intersects reports whether [low, high) shares a key with r.
func (r *keyRange) intersects(low, high []byte) bool {
	return (high == nil || bytes.Compare(r.low, high) < 0) && (r.high == nil || bytes.Compare(low, r.high) < 0)
}

// holds reports whether [low, high) lies wholly inside r.
func (r *keyRange) holds(low, high []byte) bool {
	if bytes.Compare(low, r.low) < 0 {
		return false
	}
	if r.high == nil {
		return true
	}
	return high != nil && bytes.Compare(high, r.high) <= 0
}
