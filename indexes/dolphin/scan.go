package dolphin

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/dmbench/dmbench/cost"
	"github.com/dmbench/dmbench/transport"
)

// errStop ends a scan that has passed its n entries or whose fn said stop.
var errStop = errors.New("dolphin: scan done")

// scanner is one Scan's state.
type scanner struct {
	c       *client
	n       int
	fn      func(key, val []byte) bool
	emitted int
	last    []byte // last key passed to fn
	// pre holds images read ahead in one batch (the start key's special
	// node and first leaves), by address; each is used once.
	pre map[transport.GAddr][]byte
}

// Scan passes up to n entries with keys >= start in key order (section
// III.B, Scan). It walks the ART in key order from the start key. The
// cached path is trusted only to lead to the start key's own subtree; the
// node where the scan first picks among children by range (the special
// node, or the node whose slot is a leaf) is read fresh together with its
// first leaves in one doorbell batch, and every internal node the scan
// moves sideways in is read fresh, so a leaf another compute node added
// is never skipped. A leaf found split after its parent was read makes
// the scan resume after the last key it passed.
func (c *client) Scan(start []byte, n int, fn func(key, val []byte) bool) error {
	defer c.flush()
	if err := c.checkKey(start); err != nil {
		return err
	}
	if n <= 0 {
		return nil
	}
	s := &scanner{c: c, n: n, fn: fn}
	lb := bytes.Clone(start)
	for range maxRetries {
		if err := s.prefetch(lb); err != nil {
			return err
		}
		root, fresh, err := s.node(c.x.root, node256)
		if err != nil {
			return err
		}
		err = s.walk(root, fresh, lb)
		switch err {
		case nil, errStop:
			return nil
		case errRestart:
			if s.last != nil {
				if lb = successor(s.last); lb == nil {
					return nil
				}
			}
			continue
		}
		return err
	}
	return fmt.Errorf("dolphin: scan from %x did not settle", start)
}

// prefetch follows the cached path for lb to the first node that picks
// by range and reads it and its first leaves in one batch.
func (s *scanner) prefetch(lb []byte) error {
	c := s.c
	s.pre = map[transport.GAddr][]byte{}
	c.charge(cost.CacheLookup())
	var f freshness
	n, _ := c.cached(c.x.root, &f)
	last := c.l.keySize - 1
	for n != nil && n.partialMatch(lb) < 0 {
		if n.depth() == last {
			break
		}
		i := n.child(lb[n.depth()])
		if i < 0 || n.slots[i].leaf() {
			break
		}
		n, _ = c.cached(n.slots[i].addr(), &f)
	}
	if n == nil {
		return nil
	}
	return s.readAhead(n, lb)
}

// readAhead reads the node n is a cached copy of, and the first leaves
// its copy names at or after lb (nil: from the first), in one batch.
func (s *scanner) readAhead(n *inode, lb []byte) error {
	c := s.c
	last := c.l.keySize - 1
	var ops []transport.Op
	read := func(a transport.GAddr, size int) {
		buf := make([]byte, size)
		s.pre[a] = buf
		ops = append(ops, transport.ReadOp(buf, a))
	}
	read(n.addr, n.size)
	if lb == nil || n.partialMatch(lb) < 0 {
		var leaves []slot
		if n.depth() == last {
			order := n.ordered()
			from := 0
			if lb != nil {
				i := n.rangeChild(lb[last])
				for k, j := range order {
					if j == i {
						from = k
					}
				}
			}
			for _, j := range order[from:] {
				leaves = append(leaves, n.slots[j])
			}
		} else if lb != nil {
			if i := n.child(lb[n.depth()]); i >= 0 && n.slots[i].leaf() {
				leaves = []slot{n.slots[i]}
			}
		}
		for _, l := range leaves[:min(len(leaves), s.batch())] {
			read(l.addr(), c.l.leafBytes)
		}
	}
	if err := c.post(ops...); err != nil {
		return fmt.Errorf("scan: reading ahead: %w", err)
	}
	return nil
}

// batch is how many leaves to read at once for the entries still wanted.
func (s *scanner) batch() int {
	return min(1+(s.n-s.emitted)/max(1, s.c.l.span/4), 16)
}

// node returns the internal node at a: the image read ahead (fresh), the
// cached copy (not fresh), or a copy read now (fresh).
func (s *scanner) node(a transport.GAddr, t nodeType) (*inode, bool, error) {
	c := s.c
	if img, ok := s.pre[a]; ok {
		delete(s.pre, a)
		n, err := c.l.decodeInner(a, img)
		if err == nil {
			c.cache.put(n, c.ep.Rand())
		}
		return n, true, err
	}
	var f freshness
	if n, _ := c.cached(a, &f); n != nil {
		return n, false, nil
	}
	n, err := c.fetch(a, t)
	return n, true, err
}

// successor is the key right after k, or nil after the greatest key.
func successor(k []byte) []byte {
	s := bytes.Clone(k)
	for i := len(s) - 1; i >= 0; i-- {
		s[i]++
		if s[i] != 0 {
			return s
		}
	}
	return nil
}

// walk passes the entries of n's subtree at or after lb (nil: all). A
// cached copy of n (not fresh) is used only to follow the start key's own
// child; every other decision is made on a fresh copy.
func (s *scanner) walk(n *inode, fresh bool, lb []byte) error {
	c := s.c
	if fresh && n.obsolete() {
		return errRestart
	}
	if lb != nil {
		base := n.parentDepth() + 1
		switch bytes.Compare(lb[base:base+len(n.partial)], n.partial) {
		case 1:
			return nil
		case -1:
			lb = nil
		}
	}
	special := n.depth() == c.l.keySize-1
	var err error
	if !fresh && lb != nil && !special {
		if i := n.child(lb[n.depth()]); i >= 0 {
			if err := s.child(n.slots[i], lb); err != nil {
				return err
			}
			if lb[n.depth()] == 0xff {
				return nil // the bounded child was n's last
			}
			lb = successorAt(lb, n.depth())
		}
	}
	if !fresh {
		if n, err = c.fetch(n.addr, n.typ()); err != nil {
			return err
		}
		if n.obsolete() {
			return errRestart
		}
	}
	if special {
		return s.walkSpecial(n, lb)
	}
	c.charge(n.searchCost(false))
	for _, i := range n.ordered() {
		sl := n.slots[i]
		var clb []byte
		if lb != nil {
			if sl.key() < lb[n.depth()] {
				continue
			}
			if sl.key() == lb[n.depth()] {
				clb = lb
			}
		}
		if err := s.child(sl, clb); err != nil {
			return err
		}
	}
	return nil
}

// child walks the subtree a normal node's slot points to. A special node
// the cache has a copy of is read with its first leaves in one batch.
func (s *scanner) child(sl slot, lb []byte) error {
	if sl.leaf() {
		return s.walkLeaves([]slot{sl}, lb, true)
	}
	if _, ok := s.pre[sl.addr()]; !ok && lb == nil {
		if cp := s.c.cache.get(sl.addr()); cp != nil && cp.depth() == s.c.l.keySize-1 {
			if err := s.readAhead(cp, nil); err != nil {
				return err
			}
		}
	}
	child, fresh, err := s.node(sl.addr(), sl.typ())
	if err != nil {
		return err
	}
	return s.walk(child, fresh, lb)
}

// successorAt is the first key after every key sharing lb's first d+1
// bytes, given that lb[d] is not 0xff.
func successorAt(lb []byte, d int) []byte {
	s := make([]byte, len(lb))
	copy(s, lb[:d+1])
	s[d]++
	return s
}

// walkSpecial passes the entries of a special node's leaves from the one
// whose range holds lb's last byte.
func (s *scanner) walkSpecial(n *inode, lb []byte) error {
	c := s.c
	c.charge(n.searchCost(true))
	order := n.ordered()
	from := 0
	if lb != nil {
		i := n.rangeChild(lb[c.l.keySize-1])
		for k, j := range order {
			if j == i {
				from = k
			}
		}
	}
	var leaves []slot
	for _, j := range order[from:] {
		leaves = append(leaves, n.slots[j])
	}
	return s.walkLeaves(leaves, lb, false)
}

// walkLeaves reads leaves (in key order, each slot's byte the lowest last
// byte it owns up to the next one's) in batches and passes their entries
// at or after lb. alone says the leaf hangs off a normal node and owns
// its whole prefix.
func (s *scanner) walkLeaves(leaves []slot, lb []byte, alone bool) error {
	c := s.c
	last := c.l.keySize - 1
	for len(leaves) > 0 {
		batch := min(len(leaves), s.batch())
		imgs := make([]leafImage, batch)
		var ops []transport.Op
		for i := range batch {
			a := leaves[i].addr()
			if img, ok := s.pre[a]; ok {
				delete(s.pre, a)
				imgs[i] = img
				continue
			}
			imgs[i] = make(leafImage, c.l.leafBytes)
			ops = append(ops, transport.ReadOp(imgs[i], a))
		}
		if len(ops) > 0 {
			if err := c.post(ops...); err != nil {
				return fmt.Errorf("scan: reading leaves: %w", err)
			}
		}
		for i := 0; i < batch; i++ {
			img := imgs[i]
			for !c.l.consistent(img) {
				if err := c.read(img, leaves[i].addr()); err != nil {
					return fmt.Errorf("scan: reading a leaf: %w", err)
				}
			}
			ownLo, ownHi := leaves[i].key(), byte(255)
			if alone {
				ownLo = 0
			} else if i+1 < len(leaves) {
				ownHi = leaves[i+1].key() - 1
			}
			if c.l.lo(img) != ownLo || c.l.hi(img) < ownHi {
				return errRestart // split since its parent was read
			}
			from := ownLo
			prefix := c.l.prefix(img)
			if lb != nil {
				switch bytes.Compare(prefix, lb[:last]) {
				case -1:
					continue
				case 0:
					from = max(from, lb[last])
				}
			}
			if err := s.emit(img, prefix, from, ownHi); err != nil {
				return err
			}
			lb = nil
		}
		leaves = leaves[batch:]
	}
	return nil
}

// emit passes a leaf's live entries with last bytes in [from, to].
func (s *scanner) emit(img leafImage, prefix []byte, from, to byte) error {
	c := s.c
	for _, e := range c.liveEntries(img) {
		if e.b < from || e.b > to {
			continue
		}
		v, ok := c.l.valueAt(img, e.at)
		if !ok {
			return errRestart
		}
		key := append(bytes.Clone(prefix), e.b)
		s.last = key
		s.emitted++
		if !s.fn(key, v) || s.emitted >= s.n {
			return errStop
		}
	}
	return nil
}
