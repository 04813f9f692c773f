package sherman

import (
	"bytes"
	"fmt"
	"sort"

	"github.com/dmbench/dmbench/indexes/internal/inner"
	"github.com/dmbench/dmbench/transport"
)

// class is how a node is synchronised in P-Sherman (DEX VLDB'24, sections
// 4 and 8.2): nodes inside the reader's own partition by its compute node's
// local locks and versions, nodes inside another compute node's partition
// by that node's (which a reader cannot see, so it checks the node's own
// versions or checksum), and nodes that straddle partitions by the
// variant's RDMA protocol. Without partitioning every node is shared.
type class uint8

const (
	classShared class = iota
	classOwned
	classForeign
)

// partitions are the compute nodes' key ranges: bounds[i] is the lower
// bound of the range of compute node owners[i].
type partitions struct {
	bounds [][]byte
	owners []transport.NodeID
}

func newPartitions(bounds [][]byte, computeNodes []transport.NodeID, keySize int) (*partitions, error) {
	if len(bounds) != len(computeNodes) {
		return nil, fmt.Errorf("partitioned=true needs one partition lower bound per compute node (Env.Partitions): got %d bounds for %d compute nodes", len(bounds), len(computeNodes))
	}
	for i, b := range bounds {
		if len(b) != keySize {
			return nil, fmt.Errorf("partition bound %d is %d bytes, want the key size %d", i, len(b), keySize)
		}
		if i == 0 && !inner.IsZero(b) {
			return nil, fmt.Errorf("the first partition bound is %x, want the zero key", b)
		}
		if i > 0 && bytes.Compare(bounds[i-1], b) >= 0 {
			return nil, fmt.Errorf("partition bounds not increasing at %d: %x then %x", i, bounds[i-1], b)
		}
	}
	return &partitions{bounds: bounds, owners: computeNodes}, nil
}

// index is the partition holding key.
func (p *partitions) index(key []byte) int {
	return sort.Search(len(p.bounds), func(i int) bool { return bytes.Compare(p.bounds[i], key) > 0 }) - 1
}

// owner is the compute node whose partition holds key.
func (p *partitions) owner(key []byte) transport.NodeID { return p.owners[p.index(key)] }

// within reports whether r lies inside one partition, and which.
func (p *partitions) within(r inner.KeyRange) (int, bool) {
	if !r.Known {
		return 0, false
	}
	i := p.index(r.Lo)
	if i+1 == len(p.bounds) {
		return i, true
	}
	return i, r.Hi != nil && bytes.Compare(r.Hi, p.bounds[i+1]) <= 0
}

// classOf classifies a node with range r for a client of compute node me.
func (p *partitions) classOf(r inner.KeyRange, me transport.NodeID) class {
	if p == nil {
		return classShared
	}
	i, ok := p.within(r)
	switch {
	case !ok:
		return classShared
	case p.owners[i] == me:
		return classOwned
	default:
		return classForeign
	}
}

// boundsIn lists the partition bounds b with lo < b <= hi: the places a
// leaf holding keys lo..hi could be split so that its halves fall into
// fewer partitions.
func (p *partitions) boundsIn(lo, hi []byte) [][]byte {
	if p == nil {
		return nil
	}
	var out [][]byte
	for _, b := range p.bounds[1:] {
		if bytes.Compare(b, lo) > 0 && bytes.Compare(b, hi) <= 0 {
			out = append(out, b)
		}
	}
	return out
}
