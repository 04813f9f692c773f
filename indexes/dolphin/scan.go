package dolphin

import (
	"bytes"
	"errors"
	"fmt"

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
}

// Scan passes up to n entries with keys >= start in key order. It walks
// the ART in key order from the start key, reading the internal nodes it
// passes from memory (a cached copy may lack a child inserted by another
// compute node, and a scan must not skip it) and the leaves of a special
// node in one doorbell batch per group (section III.B, Scan: batched
// READs of all nodes in range). A leaf found split after its parent was
// read makes the scan resume after the last key it passed.
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
		root, err := c.fetch(c.x.root, node256)
		if err != nil {
			return err
		}
		err = s.walk(root, lb)
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

// walk passes the entries of n's subtree at or after lb (nil: all).
func (s *scanner) walk(n *inode, lb []byte) error {
	c := s.c
	if n.obsolete() {
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
	if n.depth() == c.l.keySize-1 {
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
		var err error
		if sl.leaf() {
			err = s.walkLeaves([]slot{sl}, clb, true)
		} else {
			var child *inode
			if child, err = c.fetch(sl.addr(), sl.typ()); err == nil {
				err = s.walk(child, clb)
			}
		}
		if err != nil {
			return err
		}
	}
	return nil
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
		batch := min(len(leaves), 1+(s.n-s.emitted)/max(1, c.l.span/4), 16)
		imgs := make([]leafImage, batch)
		ops := make([]transport.Op, batch)
		for i := range batch {
			imgs[i] = make(leafImage, c.l.leafBytes)
			ops[i] = transport.ReadOp(imgs[i], leaves[i].addr())
		}
		if err := c.post(ops...); err != nil {
			return fmt.Errorf("scan: reading leaves: %w", err)
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
