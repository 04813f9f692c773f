package rftree

import (
	"fmt"

	"github.com/dmbench/dmbench/cost"
	"github.com/dmbench/dmbench/indexes/internal/inner"
	"github.com/dmbench/dmbench/transport"
)

// The search layer cache (section 3.3.3): each compute node rebuilds the
// search layer from one non-blocking copy of it (readSearchLayer) and its
// threads share it. A snapshot is immutable once built; a refresh builds
// a new one beside it and swaps the compute node's pointer to it
// (copy-on-write), so readers never wait and never see a half-built
// cache: the SLC's local concurrency control is the snapshot's version,
// which a thread that wants a fresher cache compares before it rebuilds.
//
// Internal nodes in the copy may be caught mid-write. They tolerate it
// as the paper's Case 1 describes: a writer rewrites a node in one WRITE
// that lands in increasing address order, a child stored before its key,
// so a READ overlapping it sees a prefix of the new node and a suffix of
// the old: an entry shifted right may be missing (its keys go to the
// child to its left, and the data layer's sibling pointers lead on), and
// an entry shifted left may appear twice, or as a new child under an old
// key; that last shows as a child equal to its right neighbour, and the
// reader takes the child to its left instead (Figure 4); and an entry
// appended past the old last one may show its child but not yet its key,
// so a key below its predecessor ends the node for the reader. A route that
// still ends too far right is caught at the data node by its low fence.

// snapshot is one version of a compute node's SLC.
type snapshot struct {
	version   uint64
	rootAddr  transport.GAddr
	rootLevel int
	nodes     []inode
	index     map[transport.GAddr]int32
	bytes     uint64
}

// inode is a cached internal node: its image and its children and sibling
// resolved to positions in the snapshot (-1: not in it).
type inode struct {
	addr transport.GAddr
	img  []byte
	n    int // keys usable: count cut at the first empty child
	kids []int32
	sib  int32
}

// buildSnapshot parses a copy of the search layer.
func (x *Index) buildSnapshot(sl searchLayer, version uint64) *snapshot {
	l := &x.l
	s := &snapshot{version: version, index: map[transport.GAddr]int32{}}
	s.rootAddr, s.rootLevel = inner.DecodeRoot(sl.root)
	for _, ch := range sl.chunks {
		for off := 0; off+l.nodeBytes <= len(ch.data); off += l.nodeBytes {
			img := ch.data[off : off+l.nodeBytes]
			if level(img) == 0 {
				continue // claimed but not yet written
			}
			s.index[ch.base.Add(uint64(off))] = int32(len(s.nodes))
			s.nodes = append(s.nodes, inode{addr: ch.base.Add(uint64(off)), img: img, n: x.usableKeys(img)})
		}
	}
	for i := range s.nodes {
		nd := &s.nodes[i]
		nd.kids = make([]int32, nd.n+1)
		for k := range nd.kids {
			nd.kids[k] = s.find(l.innerChild(nd.img, k))
		}
		nd.sib = s.find(sibling(nd.img))
	}
	s.bytes = uint64(len(s.nodes) * l.nodeBytes)
	return s
}

func (s *snapshot) find(a transport.GAddr) int32 {
	if i, ok := s.index[a]; ok {
		return i
	}
	return -1
}

// usableKeys is how many keys of internal node img a reader uses: its
// count, cut at the first entry whose child is not there yet or whose key
// is below the one before it (its child landed, its key not yet: an
// entry that an insert appended past the old last one).
func (x *Index) usableKeys(img []byte) int {
	l := &x.l
	n := min(count(img), l.innerCard)
	for i := range n {
		if l.innerChild(img, i+1) == 0 || i > 0 && compare(l.innerKey(img, i), l.innerKey(img, i-1)) < 0 {
			return i
		}
	}
	return n
}

// childFor picks the child of internal node img (n usable keys) for key:
// the child of the last key at or below key, or, if that child equals its
// right neighbour (an entry caught mid-shift), the one to its left. The
// neighbour may lie past the count: a removal's new count lands before
// the entries it shifts, and slots past the count of a node at rest are
// clear, so they never match.
func (x *Index) childFor(img []byte, n int, key []byte) int {
	l := &x.l
	lo, hi := 0, n
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if compare(l.innerKey(img, m), key) <= 0 {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo > 0 && lo < l.innerCard && l.innerChild(img, lo) == l.innerChild(img, lo+1) {
		return lo - 1
	}
	return lo
}

// route is where the SLC sends a key: the data node, and the internal
// nodes passed on the way (path, by level) for the splits and merges to
// come. Internal nodes missing from the snapshot (written after it was
// read) are READ; so are the siblings a stale node's high fence sends the
// key to. hops counts the sibling pointers followed.
type route struct {
	leaf    transport.GAddr
	hops    int
	fetched bool // an internal node had to be READ: the SLC is behind
}

func (c *client) route(s *snapshot, key []byte) (route, error) {
	x, l := c.x, &c.x.l
	var r route
	clear(c.path[:])
	if s.rootLevel == 0 {
		r.leaf = s.rootAddr
		return r, nil
	}
	cur, img, n := s.find(s.rootAddr), []byte(nil), 0
	addr := s.rootAddr
	for lvl := s.rootLevel; lvl >= 1; {
		if cur >= 0 {
			nd := &s.nodes[cur]
			img, n, addr = nd.img, nd.n, nd.addr
		} else {
			var err error
			if img, err = c.readInternal(addr); err != nil {
				return r, err
			}
			n = x.usableKeys(img)
			r.fetched = true
		}
		if level(img) != lvl {
			return r, errWrongNode
		}
		if !unbounded(img) && compare(key, l.high(img)) >= 0 {
			addr = sibling(img)
			cur = s.link(cur, func(nd *inode) int32 { return nd.sib }, addr)
			r.hops++
			if addr == 0 || r.hops > maxRetries {
				return r, errWrongNode
			}
			continue
		}
		c.path[lvl] = addr
		k := x.childFor(img, n, key)
		c.charge(cost.NodeSearch(n + 1))
		child := l.innerChild(img, k)
		if lvl == 1 {
			r.leaf = child
			return r, nil
		}
		cur = s.link(cur, func(nd *inode) int32 { return nd.kids[k] }, child)
		addr = child
		lvl--
	}
	return r, errWrongNode
}

// link follows a resolved link of snapshot node cur, or looks addr up
// when cur was READ rather than cached.
func (s *snapshot) link(cur int32, via func(*inode) int32, addr transport.GAddr) int32 {
	if cur >= 0 {
		return via(&s.nodes[cur])
	}
	return s.find(addr)
}

// readInternal READs an internal node the SLC does not hold, without
// checks: internal nodes are read non-blocking (section 3.3.3).
func (c *client) readInternal(a transport.GAddr) ([]byte, error) {
	img := make([]byte, c.x.l.nodeBytes)
	if err := c.read(img, a); err != nil {
		return nil, err
	}
	return img, nil
}

// refresh rebuilds this compute node's SLC from the memory nodes unless
// another thread rebuilt it since seen was current: READ the search layer,
// build a new snapshot, swap. With wait false it gives up at once when
// another thread is refreshing (the SLC is only behind); with wait true
// it waits for that thread (the SLC sent the client to a wrong node).
func (c *client) refresh(seen *snapshot, wait bool) error {
	cn := c.cn
	if wait {
		c.flush()
		cn.refreshMu.Lock(c.ep)
	} else if !cn.refreshMu.TryLock() {
		return nil
	}
	defer cn.refreshMu.Unlock()
	if cur := cn.slc.Load(); cur != seen {
		return nil
	}
	prev := c.ep.Step()
	c.flush()
	c.ep.SetStep(stepRefresh)
	defer c.ep.SetStep(prev)
	sl, err := c.readSearchLayer()
	if err != nil {
		return fmt.Errorf("refreshing the search layer cache: %w", err)
	}
	s := c.x.buildSnapshot(sl, cn.versions.Add(1))
	c.charge(cost.Copy(int(s.bytes)) + int64(len(s.nodes))*cost.HashKey())
	c.flush()
	cn.slc.Store(s)
	cn.refreshes.Add(1)
	return nil
}
