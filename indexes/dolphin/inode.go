package dolphin

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/dmbench/dmbench/cost"
	"github.com/dmbench/dmbench/transport"
)

// inode is a decoded ART internal node: a copy read from a memory node
// (fresh) or held in a compute node's cache. It is never changed once
// built; a newer copy replaces it.
type inode struct {
	addr    transport.GAddr
	hdr     header
	partial []byte
	slots   []slot
	size    int // bytes of the remote node
}

func (n *inode) depth() int     { return n.hdr.depth() }
func (n *inode) typ() nodeType  { return n.hdr.typ() }
func (n *inode) obsolete() bool { return n.hdr.obsolete() }

// word is the slot word that points to n from its parent.
func (n *inode) word(b byte) (slot, error) { return makeSlot(kindInner, n.typ(), b, n.addr) }

func (l *layout) decodeInner(a transport.GAddr, img []byte) (*inode, error) {
	h := header(binary.LittleEndian.Uint64(img))
	t := h.typ()
	if len(img) < l.innerBytes(t) {
		return nil, fmt.Errorf("internal node at %v: type %d needs %d bytes, read %d", a, t, l.innerBytes(t), len(img))
	}
	if h.partialLen() > l.partialCap || h.depth() >= l.keySize {
		return nil, fmt.Errorf("internal node at %v: bad header %#x", a, uint64(h))
	}
	n := &inode{addr: a, hdr: h, size: l.innerBytes(t)}
	n.partial = bytes.Clone(img[8 : 8+h.partialLen()])
	n.slots = make([]slot, t.capacity())
	for i := range n.slots {
		n.slots[i] = slot(binary.LittleEndian.Uint64(img[l.slotsOff()+8*i:]))
	}
	return n, nil
}

// encodeInner is the remote image of a node.
func (l *layout) encodeInner(hdr header, partial []byte, slots []slot) []byte {
	img := make([]byte, l.innerBytes(hdr.typ()))
	binary.LittleEndian.PutUint64(img, uint64(hdr))
	copy(img[8:], partial)
	for i, s := range slots {
		binary.LittleEndian.PutUint64(img[l.slotsOff()+8*i:], uint64(s))
	}
	return img
}

func (l *layout) slotAddr(n *inode, i int) transport.GAddr {
	return n.addr.Add(uint64(l.slotsOff() + 8*i))
}

// parentDepth is the depth of n's parent as n's partial implies.
func (n *inode) parentDepth() int { return n.depth() - len(n.partial) - 1 }

// partialMatch compares key's bytes at n's partial with the partial: it
// returns the index of the first differing byte, or -1 if all match.
func (n *inode) partialMatch(key []byte) int {
	base := n.parentDepth() + 1
	for i, b := range n.partial {
		if key[base+i] != b {
			return i
		}
	}
	return -1
}

// filled is the number of used slots of a node that fills in order.
func (n *inode) filled() int {
	if n.typ() == node256 {
		c := 0
		for _, s := range n.slots {
			if !s.empty() {
				c++
			}
		}
		return c
	}
	for i, s := range n.slots {
		if s.empty() {
			return i
		}
	}
	return len(n.slots)
}

// child returns the slot index for key byte b in a normal node, or -1.
func (n *inode) child(b byte) int {
	if n.typ() == node256 {
		if n.slots[b].empty() {
			return -1
		}
		return int(b)
	}
	for i, s := range n.slots {
		if s.empty() {
			break
		}
		if s.key() == b {
			return i
		}
	}
	return -1
}

// rangeChild returns the slot of a special node whose leaf covers last
// byte b: the one with the greatest lowest byte at or below b, or -1.
func (n *inode) rangeChild(b byte) int {
	if n.typ() == node256 {
		for i := int(b); i >= 0; i-- {
			if !n.slots[i].empty() {
				return i
			}
		}
		return -1
	}
	best := -1
	for i, s := range n.slots {
		if s.empty() {
			break
		}
		if s.key() <= b && (best < 0 || s.key() > n.slots[best].key()) {
			best = i
		}
	}
	return best
}

// ordered returns the slot indexes of n's children in key-byte order.
func (n *inode) ordered() []int {
	var idx []int
	for i, s := range n.slots {
		if !s.empty() {
			idx = append(idx, i)
		} else if n.typ() != node256 {
			break
		}
	}
	if n.typ() != node256 {
		for i := 1; i < len(idx); i++ {
			for j := i; j > 0 && n.slots[idx[j]].key() < n.slots[idx[j-1]].key(); j-- {
				idx[j], idx[j-1] = idx[j-1], idx[j]
			}
		}
	}
	return idx
}

// searchCost is the local work of finding a child in n: a linear scan of
// the used slots of Node4/16/48 (and of a special node's ranges), one
// probe of a Node256.
func (n *inode) searchCost(special bool) int64 {
	if n.typ() == node256 && !special {
		return cost.NodeSearch(1)
	}
	return cost.LinearScan(max(1, n.filled()))
}

// withSlot is a copy of n with slot i set to s (after a CAS that did so).
func (n *inode) withSlot(i int, s slot) *inode {
	m := *n
	m.slots = append([]slot(nil), n.slots...)
	m.slots[i] = s
	return &m
}
