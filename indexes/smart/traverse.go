package smart

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/dmbench/dmbench/cost"
	"github.com/dmbench/dmbench/transport"
)

// read issues one READ, numbering it for read delegation.
func (c *client) read(dst []byte, src transport.GAddr) error { return c.readOf(dst, src, false) }

func (c *client) readOf(dst []byte, src transport.GAddr, leaf bool) error {
	c.reads++
	if c.leading != nil {
		c.leading.posted(leaf)
	}
	return c.ep.Read(dst, src)
}

// start is the first hop for key: the deepest cached slot on its path,
// or the root slot read from memory on a cache miss.
func (c *client) start(key []byte) (hop, error) {
	c.ep.Compute(cost.CacheLookup())
	h, probes, ok := c.cn.cache.lookup(key)
	c.ep.Compute(cost.FingerprintProbe(probes))
	if ok {
		return h, nil
	}
	return c.reread(hop{pPtr: c.x.rootPtr})
}

// reread reads the slot at h.pPtr again, after a copy of it proved stale
// (the cached node it came from is dropped) or to confirm a negative
// answer that rests on a cached slot.
func (c *client) reread(h hop) (hop, error) {
	if h.cached {
		c.cn.cache.invalidate(h.node)
	}
	var b [8]byte
	if err := c.read(b[:], h.pPtr); err != nil {
		return hop{}, fmt.Errorf("reading the slot at %v: %w", h.pPtr, err)
	}
	s := binary.LittleEndian.Uint64(b[:])
	return hop{pPtr: h.pPtr, p: s, depth: h.depth, at: c.reads}, nil
}

// readNode READs the node slot s points to, as many slot bytes as the
// slot's type says, and the rest when the header says the node has grown.
func (c *client) readNode(s uint64) (node, error) {
	a := slotTarget(s)
	t := slotType(s)
	if t >= numTypes {
		return node{}, fmt.Errorf("slot %#x names node type %d", s, t)
	}
	// decodeNode copies the slots out, so the READ buffer is the client's
	// to reuse.
	if c.nodeBuf == nil {
		c.nodeBuf = make([]byte, nodeBytes)
	}
	buf := c.nodeBuf
	size := nodeReadBytes(t)
	if err := c.read(buf[:size], a); err != nil {
		return node{}, fmt.Errorf("reading node %v: %w", a, err)
	}
	ht := decodeHeader(binary.LittleEndian.Uint64(buf[nodeHeader:])).typ
	if ht >= numTypes {
		return node{}, fmt.Errorf("node %v has type %d", a, ht)
	}
	if ht > t {
		if err := c.read(buf[size:nodeReadBytes(ht)], a.Add(uint64(size))); err != nil {
			return node{}, fmt.Errorf("reading the rest of node %v: %w", a, err)
		}
		size = nodeReadBytes(ht)
	}
	n := decodeNode(buf[:size])
	n.slots = n.slots[:min(len(n.slots), capacity(max(t, ht)))]
	return n, nil
}

// readLeaf READs a leaf, again until its CRC matches (a READ that
// overlapped the leaf's in-place WRITE).
func (c *client) readLeaf(a transport.GAddr) (leaf, []byte, error) {
	buf := make([]byte, c.ll.size)
	for {
		if err := c.readOf(buf, a, true); err != nil {
			return leaf{}, nil, fmt.Errorf("reading leaf %v: %w", a, err)
		}
		lf := c.ll.decode(buf)
		c.ep.Compute(cost.Checksum(c.ll.ks + c.ll.vs))
		if c.ll.consistent(lf) {
			return lf, buf, nil
		}
	}
}

// What a descent along a key ends at.
type ending uint8

const (
	endFound     ending = iota // a valid leaf with the key
	endEmpty                   // an empty slot or a tombstone at h
	endDeadLeaf                // h points to a deleted leaf
	endOtherLeaf               // h points to a leaf with another key
	endPrefix                  // h points to a node whose prefix differs from the key at mismatch
	endNoSlot                  // h points to a node with no slot for the key's next byte
)

type outcome struct {
	end ending
	h   hop
	// at numbers the READ (c.reads) from which on the answer holds at
	// some point (see descend): read delegation hands it only to the
	// searchers that joined before that READ was posted.
	at       int64
	leafAddr transport.GAddr
	lf       leaf
	raw      []byte // the leaf as read
	nodeAddr transport.GAddr
	n        node
	mismatch int
}

// errCorrupt reports a tree that breaks SMART's invariants.
var errCorrupt = errors.New("smart: corrupt tree")

// descend follows key from h until it reaches its leaf or finds it
// absent. A slot that came from the cache is checked by the reverse
// pointer and depth of what it leads to; a stale one is dropped from the
// cache and read again from memory. A negative answer that rests on a
// cached slot is confirmed by reading that slot again (doc.go says why)
// when confirm is set: searches, updates and deletes, whose answer the
// negative is; an insert's CAS on the slot checks it anyway.
//
// The outcome's at is the READ from which on its answer held at some
// moment, for read delegation: a found key, the READ of its leaf (a
// valid leaf holds its key's value); an answer at what a cached slot led
// to, the READ of that node or leaf (its reverse pointer and the confirm
// tie it to the slot). Past a slot read from memory, a negative answer
// holds at some moment between that slot's READ and the READ of what
// it leads to, but not always at the latter: the node may have been
// moved under a new one that holds the key before the prefix split
// rewrote its header, and a dead leaf replaced by a new insert of the
// key. So at is then the slot's: the READ that fetched it, or the at of
// the node it was read in.
func (c *client) descend(key []byte, h hop, confirm bool) (outcome, error) {
	var err error
	for {
		switch {
		case absent(h.p):
			if h.cached {
				if h, err = c.reread(h); err != nil {
					return outcome{}, err
				}
				continue
			}
			return outcome{end: endEmpty, h: h, at: h.at}, nil

		case isLeaf(h.p):
			a := slotTarget(h.p)
			lf, raw, err := c.readLeaf(a)
			if err != nil {
				return outcome{}, err
			}
			if h.cached && (lf.rev != h.pPtr || !lf.valid) {
				if h, err = c.reread(h); err != nil {
					return outcome{}, err
				}
				continue
			}
			out := outcome{h: h, at: h.at, leafAddr: a, lf: lf, raw: raw}
			switch {
			case !lf.valid:
				out.end = endDeadLeaf
			case bytes.Equal(lf.key, key):
				out.end = endFound
			default:
				out.end = endOtherLeaf
			}
			if out.end == endFound || h.cached {
				out.at = c.reads
			}
			if out.end != endFound && h.cached && confirm {
				fresh, err := c.confirm(h)
				if err != nil {
					return outcome{}, err
				}
				if fresh.p != h.p {
					h = fresh
					continue
				}
				out.h = fresh
			}
			return out, nil

		default:
			a := slotTarget(h.p)
			first := c.reads + 1
			n, err := c.readNode(h.p)
			if err != nil {
				return outcome{}, err
			}
			if n.hdr.depth != h.depth || (h.cached && n.rev != h.pPtr) {
				// A stale cached slot, or a prefix split under way
				// between this slot and the node: read the slot again.
				if h, err = c.reread(h); err != nil {
					return outcome{}, err
				}
				continue
			}
			if h.cached && n.hdr.typ > slotType(h.p) && h.node != nil {
				c.cn.cache.invalidate(h.node) // the copy has the old node type
			}
			c.cn.cache.add(c.ep, key, a, n)
			at := h.at
			if h.cached {
				at = first
			}
			out := outcome{h: h, at: at, nodeAddr: a, n: n, mismatch: -1}
			for i := range n.hdr.plen {
				if d := n.hdr.depth + i; d >= len(key) || key[d] != n.hdr.prefix[i] {
					out.end, out.mismatch = endPrefix, i
					break
				}
			}
			d := n.hdr.depth + n.hdr.plen
			if out.end != endPrefix {
				if d >= len(key) {
					return outcome{}, fmt.Errorf("%w: node %v at depth %d with a %d-byte prefix for %d-byte keys", errCorrupt, a, n.hdr.depth, n.hdr.plen, len(key))
				}
				i, probes := findSlot(n.slots, key[d])
				c.ep.Compute(cost.FingerprintProbe(probes))
				if i >= 0 {
					h = hop{pPtr: slotAddr(a, i), p: n.slots[i], depth: d + 1, at: at}
					continue
				}
				out.end = endNoSlot
			}
			if h.cached && confirm {
				fresh, err := c.confirm(h)
				if err != nil {
					return outcome{}, err
				}
				if fresh.p != h.p {
					h = fresh
					continue
				}
				out.h = fresh
			}
			return out, nil
		}
	}
}

// confirm reads a cached slot again; the cached copy is dropped only if
// the slot changed.
func (c *client) confirm(h hop) (hop, error) {
	node := h.node
	h.cached, h.node = false, nil
	fresh, err := c.reread(h)
	if err != nil {
		return hop{}, err
	}
	if fresh.p != h.p && node != nil {
		c.cn.cache.invalidate(node)
	}
	return fresh, nil
}
