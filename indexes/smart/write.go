package smart

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/dmbench/dmbench/cost"
	"github.com/dmbench/dmbench/indexes"
	"github.com/dmbench/dmbench/transport"
)

// errDead is a leaf lock attempt that found the leaf deleted.
var errDead = errors.New("leaf deleted")

// newLeaf is an insert's leaf: allocated and written once, its reverse
// pointer rewritten (one 8-byte WRITE) when a retry puts it in another
// slot, as the artifact does.
type newLeaf struct {
	addr transport.GAddr
	rev  transport.GAddr
	val  []byte
}

// prepare allocates the leaf and builds its image for slot rev; the
// caller WRITEs it (alone or in a batch).
func (c *client) prepare(nl *newLeaf, key []byte, val func() []byte, rev transport.GAddr) (transport.Op, error) {
	if nl.addr == 0 {
		a, err := c.allocLeaf()
		if err != nil {
			return transport.Op{}, err
		}
		nl.addr, nl.val = a, val()
		nl.rev = rev
		c.ep.Compute(cost.Checksum(c.ll.ks + c.ll.vs))
		return transport.WriteOp(a, c.ll.encode(rev, key, nl.val, true, 0)), nil
	}
	nl.rev = rev
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], uint64(rev))
	return transport.WriteOp(nl.addr.Add(leafRev), b[:]), nil
}

// upsert inserts key or, if present, updates it in place; mustExist makes
// an absent key ErrNotFound. val gives the value to write when it is
// written; same reports (and commits to) an update that would write the
// value the leaf already holds, which the artifact skips.
func (c *client) upsert(key []byte, val func() []byte, same func(cur []byte) bool, mustExist bool) error {
	h, err := c.start(key)
	if err != nil {
		return err
	}
	var nl newLeaf
	for {
		out, err := c.descend(key, h, mustExist)
		if err != nil {
			return err
		}
		if out.end == endFound {
			if same(out.lf.val) {
				return nil
			}
			err := c.updateLeaf(key, out, val)
			if errors.Is(err, errDead) {
				if h, err = c.reread(out.h); err != nil {
					return err
				}
				continue
			}
			return err
		}
		if mustExist {
			return indexes.ErrNotFound
		}
		var done bool
		switch out.end {
		case endEmpty, endDeadLeaf:
			h, done, err = c.fillSlot(key, val, &nl, out.h)
		case endOtherLeaf:
			h, done, err = c.splitLeaf(key, val, &nl, out)
		case endPrefix:
			h, done, err = c.splitPrefix(key, val, &nl, out)
		case endNoSlot:
			h, done, err = c.insertInNode(key, val, &nl, out)
		}
		if err != nil || done {
			return err
		}
	}
}

// fillSlot puts the new leaf into the empty, tombstoned or dead-leaf slot
// h: WRITE leaf, CAS slot. On a lost CAS it returns the slot as found.
func (c *client) fillSlot(key []byte, val func() []byte, nl *newLeaf, h hop) (hop, bool, error) {
	w, err := c.prepare(nl, key, val, h.pPtr)
	if err != nil {
		return hop{}, false, err
	}
	if err := c.ep.Post(w); err != nil {
		return hop{}, false, fmt.Errorf("writing leaf: %w", err)
	}
	partial := byte(0)
	if h.depth > 0 {
		partial = key[h.depth-1]
	}
	old, err := c.ep.CAS(h.pPtr, h.p, leafSlot(partial, nl.addr, c.ll.size))
	if err != nil {
		return hop{}, false, fmt.Errorf("CAS slot %v: %w", h.pPtr, err)
	}
	return hop{pPtr: h.pPtr, p: old, depth: h.depth}, old == h.p, nil
}

// splitLeaf replaces the slot of a leaf with another key by a new node
// (a chain of nodes when the keys share more than a header's prefix)
// holding both leaves: one doorbell batch WRITEs the nodes and the new
// leaf, a CAS swings the slot, a CAS points the old leaf's reverse
// pointer at its new slot.
func (c *client) splitLeaf(key []byte, val func() []byte, nl *newLeaf, out outcome) (hop, bool, error) {
	h, other := out.h, out.lf.key
	j := h.depth
	for j < len(key) && key[j] == other[j] {
		j++
	}
	if j == len(key) {
		return hop{}, false, fmt.Errorf("%w: leaf %v holds the key being inserted under another slot", errCorrupt, out.leafAddr)
	}
	oldLeaf := leafSlot(other[j], out.leafAddr, c.ll.size)
	first, last, ops, err := c.buildChain(key, h.depth, j, h.pPtr, oldLeaf, val, nl)
	if err != nil {
		return hop{}, false, err
	}
	if err := c.ep.Post(ops...); err != nil {
		return hop{}, false, fmt.Errorf("writing nodes: %w", err)
	}
	swap := withPartial(nodeSlot(0, first.addr, c.x.newType()), partialOf(h.p))
	old, err := c.ep.CAS(h.pPtr, h.p, swap)
	if err != nil {
		return hop{}, false, fmt.Errorf("CAS slot %v: %w", h.pPtr, err)
	}
	if old != h.p {
		return hop{pPtr: h.pPtr, p: old, depth: h.depth}, false, nil
	}
	if _, err := c.ep.CAS(out.leafAddr.Add(leafRev), uint64(h.pPtr), uint64(slotAddr(last.addr, 0))); err != nil {
		return hop{}, false, fmt.Errorf("CAS reverse pointer of leaf %v: %w", out.leafAddr, err)
	}
	c.cn.cache.add(c.ep, key, first.addr, first.n)
	if last.addr != first.addr {
		c.cn.cache.add(c.ep, key, last.addr, last.n)
	}
	return hop{}, true, nil
}

type builtNode struct {
	addr transport.GAddr
	n    node
}

// buildChain builds the nodes from key byte depth to diff (where key and
// the other key part), of the type new nodes get (Index.newType): nodes
// of at most maxPrefix prefix bytes each, each but the last with one slot
// for the next, the last holding other (slot 0) and the new leaf (slot
// 1). It returns the first and last node and
// the WRITEs of the nodes and of the leaf, for one doorbell batch.
func (c *client) buildChain(key []byte, depth, diff int, rev transport.GAddr, other uint64, val func() []byte, nl *newLeaf) (builtNode, builtNode, []transport.Op, error) {
	var starts []int
	for d := depth; ; d += maxPrefix + 1 {
		starts = append(starts, d)
		if diff-d <= maxPrefix {
			break
		}
	}
	built := make([]builtNode, len(starts))
	for i := range built {
		a, err := c.allocNode()
		if err != nil {
			return builtNode{}, builtNode{}, nil, err
		}
		built[i].addr = a
	}
	var ops []transport.Op
	var leafWrite transport.Op
	typ := c.x.newType()
	for i, d := range starts {
		plen := min(diff-d, maxPrefix)
		h := header{depth: d, typ: typ, plen: plen}
		copy(h.prefix[:], key[d:d+plen])
		slots := make([]uint64, capacity(typ))
		a := built[i].addr
		if i+1 < len(built) {
			slots[0] = nodeSlot(key[d+plen], built[i+1].addr, typ)
		} else {
			slots[0] = other
			w, err := c.prepare(nl, key, val, slotAddr(a, 1))
			if err != nil {
				return builtNode{}, builtNode{}, nil, err
			}
			slots[1] = leafSlot(key[diff], nl.addr, c.ll.size)
			leafWrite = w
		}
		ops = append(ops, transport.WriteOp(a, encodeNode(rev, h, slots)))
		built[i].n = node{rev: rev, hdr: h, slots: slots}
		rev = slotAddr(a, 0)
	}
	return built[0], built[len(built)-1], append(ops, leafWrite), nil
}

// splitPrefix splits the compressed prefix of the node at out.h where the
// key departs from it: a new node takes the common part and holds the old
// node (slot 0) and the new leaf (slot 1); one batch WRITEs it and the
// leaf, a CAS swings the parent slot, a masked CAS shortens the old
// node's header (leaving its type bits alone) and a CAS points its
// reverse pointer at its new slot.
func (c *client) splitPrefix(key []byte, val func() []byte, nl *newLeaf, out outcome) (hop, bool, error) {
	h, n, i := out.h, out.n, out.mismatch
	d := n.hdr.depth
	typ := max(slotType(h.p), n.hdr.typ)
	oldNode := nodeSlot(n.hdr.prefix[i], out.nodeAddr, typ)
	first, last, ops, err := c.buildChain(key, d, d+i, h.pPtr, oldNode, val, nl)
	if err != nil {
		return hop{}, false, err
	}
	if err := c.ep.Post(ops...); err != nil {
		return hop{}, false, fmt.Errorf("writing node: %w", err)
	}
	swap := withPartial(nodeSlot(0, first.addr, c.x.newType()), partialOf(h.p))
	old, err := c.ep.CAS(h.pPtr, h.p, swap)
	if err != nil {
		return hop{}, false, fmt.Errorf("CAS slot %v: %w", h.pPtr, err)
	}
	if old != h.p {
		return hop{pPtr: h.pPtr, p: old, depth: h.depth}, false, nil
	}
	nh := header{depth: d + i + 1, typ: n.hdr.typ, plen: n.hdr.plen - i - 1}
	copy(nh.prefix[:], n.hdr.prefix[i+1:n.hdr.plen])
	if err := c.casHeader(out.nodeAddr, n.hdr.word(), nh.word(), ^hdrTypeMask); err != nil {
		return hop{}, false, err
	}
	if _, err := c.ep.CAS(out.nodeAddr.Add(nodeRev), uint64(h.pPtr), uint64(slotAddr(last.addr, 0))); err != nil {
		return hop{}, false, fmt.Errorf("CAS reverse pointer of node %v: %w", out.nodeAddr, err)
	}
	c.cn.cache.invalidateAddr(out.nodeAddr)
	c.cn.cache.add(c.ep, key, first.addr, first.n)
	if last.addr != first.addr {
		c.cn.cache.add(c.ep, key, last.addr, last.n)
	}
	return hop{}, true, nil
}

// casHeader changes the bits of mask in a node's header from those of
// expect to those of swap, leaving the other bits (a concurrent type
// switch) alone: one masked CAS, or without masked CAS plain CASes that
// expect the whole word, each retry expecting the word the last returned.
// With variant=dex the header is READ first and the first CAS expects
// the type bits it shows, as DEX's copy does (src/smart.cpp:336-344).
func (c *client) casHeader(a transport.GAddr, expect, swap, mask uint64) error {
	at := a.Add(nodeHeader)
	if c.x.maskedCAS {
		if _, err := c.ep.MaskedCAS(at, expect, swap, mask, mask); err != nil {
			return fmt.Errorf("masked CAS header of node %v: %w", a, err)
		}
		return nil
	}
	if c.x.dex {
		var b [8]byte
		if err := c.read(b[:], at); err != nil {
			return fmt.Errorf("reading the header of node %v: %w", a, err)
		}
		expect = expect&mask | binary.LittleEndian.Uint64(b[:])&^mask
	}
	for {
		want := expect&^mask | swap&mask
		old, err := c.ep.CAS(at, expect, want)
		if err != nil {
			return fmt.Errorf("CAS header of node %v: %w", a, err)
		}
		if old == expect || old&mask != expect&mask {
			return nil
		}
		expect = old
	}
}

// insertInNode puts the new leaf into the node at out: into its first
// empty slot within its type's capacity, or, when the node is full,
// behind it (slots past the capacity), followed by a type switch. A lost
// CAS to a slot now holding the key's byte continues the descent there;
// behind the capacity, only after the type switch that slot needs.
func (c *client) insertInNode(key []byte, val func() []byte, nl *newLeaf, out outcome) (hop, bool, error) {
	n, a := out.n, out.nodeAddr
	d := n.hdr.depth + n.hdr.plen
	partial := key[d]
	typ := max(slotType(out.h.p), n.hdr.typ)
	try := func(i int) (hop, bool, bool, error) {
		at := slotAddr(a, i)
		w, err := c.prepare(nl, key, val, at)
		if err != nil {
			return hop{}, false, false, err
		}
		if err := c.ep.Post(w); err != nil {
			return hop{}, false, false, fmt.Errorf("writing leaf: %w", err)
		}
		old, err := c.ep.CAS(at, 0, leafSlot(partial, nl.addr, c.ll.size))
		if err != nil {
			return hop{}, false, false, fmt.Errorf("CAS slot %v: %w", at, err)
		}
		if old == 0 {
			return hop{}, true, false, nil
		}
		if partialOf(old) == partial {
			return hop{pPtr: at, p: old, depth: d + 1}, false, true, nil
		}
		return hop{}, false, false, nil
	}
	for i, s := range n.slots {
		if s != 0 {
			continue
		}
		h, done, follow, err := try(i)
		if err != nil || done || follow {
			return h, done, err
		}
	}
	for i := capacity(typ); i < fanout; i++ {
		h, done, follow, err := try(i)
		if err != nil {
			return hop{}, false, err
		}
		if !done && !follow {
			continue
		}
		// Slot i lies behind the capacity this writer read: readers see
		// it only once the node's type covers it. Whoever claimed it
		// switches the type before returning, and so does a writer that
		// follows another's entry there (to split its leaf, say), since
		// its own insert would otherwise return before that entry's
		// writer has made the slot, and with it the new key, visible.
		if next := typeFor(i); next > typ {
			if err := c.switchType(out.h, a, n.hdr.word(), next); err != nil {
				return hop{}, false, err
			}
		}
		return h, done, nil
	}
	return hop{}, false, fmt.Errorf("%w: node %v has no slot left for byte %#x", errCorrupt, a, partial)
}

// switchType grows the node at a to type next: the type bits of its
// parent slot and of its header change together, two masked CASes in one
// doorbell batch (plain CASes without masked CAS). A slot CAS lost to a
// prefix split follows the node down to its new parent slot; either CAS
// lost to a larger type is done.
func (c *client) switchType(parent hop, a transport.GAddr, hdr uint64, next int) error {
	pPtr, p := parent.pPtr, parent.p
	slotDone, hdrDone := false, false
	hdrAt := a.Add(nodeHeader)
	for !slotDone || !hdrDone {
		newSlot := withType(p, next)
		newHdr := hdr&^hdrTypeMask | uint64(next)<<8
		var ops []transport.Op
		if !slotDone {
			if c.x.maskedCAS {
				ops = append(ops, transport.MaskedCASOp(pPtr, p, newSlot, ^uint64(0), ^uint64(0)))
			} else {
				ops = append(ops, transport.CASOp(pPtr, p, newSlot))
			}
		}
		if !hdrDone {
			if c.x.maskedCAS {
				ops = append(ops, transport.MaskedCASOp(hdrAt, hdr, newHdr, hdrTypeMask, hdrTypeMask))
			} else {
				ops = append(ops, transport.CASOp(hdrAt, hdr, newHdr))
			}
		}
		if err := c.ep.Post(ops...); err != nil {
			return fmt.Errorf("switching node %v to type %d: %w", a, next, err)
		}
		k := 0
		if !slotDone {
			old := ops[k].Old
			k++
			if old == p {
				slotDone = true
			} else {
				p = old
				for isNode(p) && slotTarget(p) != a {
					// A prefix split put a node above: the old node
					// is the new node's slot 0.
					pPtr = slotAddr(slotTarget(p), 0)
					var b [8]byte
					if err := c.read(b[:], pPtr); err != nil {
						return fmt.Errorf("following node %v down: %w", a, err)
					}
					p = binary.LittleEndian.Uint64(b[:])
				}
				slotDone = !isNode(p) || slotTarget(p) != a || slotType(p) >= next
			}
		}
		if !hdrDone {
			old := ops[k].Old
			if c.x.maskedCAS && old&hdrTypeMask == hdr&hdrTypeMask || !c.x.maskedCAS && old == hdr {
				hdrDone = true
			} else {
				hdr = old
				hdrDone = decodeHeader(old).typ >= next
			}
		}
	}
	c.cn.cache.invalidateAddr(a)
	if parent.node != nil {
		c.cn.cache.invalidate(parent.node)
	}
	return nil
}
