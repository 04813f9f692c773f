package fpbtree

import (
	"bytes"
	"fmt"

	"github.com/dmbench/dmbench/cost"
	"github.com/dmbench/dmbench/indexes/combine"
	"github.com/dmbench/dmbench/transport"
)

// Client performs operations for one coroutine.
type Client struct {
	t     *Tree
	ep    transport.Endpoint
	ns    *nodeState
	alloc *transport.Allocator
	// comb is the compute node's local lock table (combine.go); it runs
	// every operation on its own without Options.Combine.
	comb combine.Client
	// root is the root's address as this client last found it (the
	// artifact's per-coroutine local_root_addr); nil until its first
	// traversal.
	root transport.GAddr

	// Buffers reused from one operation to the next, so that a search
	// allocates little more than the value it returns. A client is one
	// coroutine, so its calls never overlap; each buffer's user says
	// how long what it returns stays valid.
	entryBuf []byte // readEntry
	copyBuf  []byte // searchTable's cached copy
	out      []byte // scratch: images being written
	hits     []int  // probe
}

// Endpoint is the client's endpoint.
func (c *Client) Endpoint() transport.Endpoint { return c.ep }

// ref is what a client knows of a leaf from its bottom-level internal
// entry: address, version, table pointer, key range and parent.
type ref struct {
	leaf    transport.GAddr
	version uint64
	fp      uint64
	low     []byte
	high    []byte
	inf     bool
	parent  transport.GAddr
}

// refAt is the ref of entry i of bottom-level node n.
func refAt(n *inode, i int) ref {
	e := n.ents[i]
	r := ref{leaf: e.child, version: e.version, fp: e.fp, low: e.key, parent: n.addr}
	if i+1 < len(n.ents) {
		r.high = n.ents[i+1].key
	} else {
		r.high, r.inf = n.high.b, n.inf()
	}
	return r
}

// readNode READs an internal node, again while it is torn. The node owns
// its image (decodeNode), so every call reads into a new one.
func (c *Client) readNode(a transport.GAddr) (*inode, error) {
	g := &c.t.G
	buf := make([]byte, g.NodeSize)
	for {
		if err := c.ep.Read(buf, a); err != nil {
			return nil, fmt.Errorf("read internal node %v: %w", a, err)
		}
		c.ep.Compute(cost.Checksum(g.NodeSize))
		if n, ok := g.decodeNode(buf, a); ok {
			return n, nil
		}
		c.ep.Backoff(0) // let the writer run on real fabrics; free on sim
	}
}

// traverse walks the remote tree from the root to the node of level
// covering key, moving right along siblings past concurrent splits. It
// starts at the root the client last found, as the artifact's find_leaf
// does, and READs the root pointer only the first time and when the node
// there has split since (it no longer reaches +inf: a root never merges,
// and a split root keeps its left half).
func (c *Client) traverse(key []byte, level int) (*inode, error) {
	fresh := c.root.IsNil()
	if fresh {
		r, err := c.readRoot()
		if err != nil {
			return nil, err
		}
		c.root = r
	}
	a := c.root
	for {
		n, err := c.readNode(a)
		if err != nil {
			return nil, err
		}
		if a == c.root && !fresh && !n.inf() {
			r, err := c.readRoot()
			if err != nil {
				return nil, err
			}
			c.root, a, fresh = r, r, true
			continue
		}
		c.ep.Compute(cost.NodeSearch(len(n.ents)))
		switch {
		case !n.inf() && bytes.Compare(key, n.high.b) >= 0 && !n.sibling.IsNil():
			a = n.sibling
		case n.level < level:
			return nil, fmt.Errorf("traverse to level %d for %x: reached level %d", level, key, n.level)
		case n.level == level:
			return n, nil
		default:
			a = n.ents[n.childFor(key)].child
		}
	}
}

// bottom returns the bottom-level node covering key, whose ikey is k:
// from the cache, or by a remote traversal whose result is cached.
func (c *Client) bottom(key []byte, k *ikey) (*inode, error) {
	c.ep.Compute(cost.CacheLookup())
	if n, ok := c.ns.cache.lookup(k); ok {
		return n, nil
	}
	return c.refresh(key)
}

// refresh re-reads the bottom-level node covering key and caches it.
func (c *Client) refresh(key []byte) (*inode, error) {
	n, err := c.traverse(key, 1)
	if err != nil {
		return nil, err
	}
	c.ns.cache.put(n)
	return n, nil
}

// locate returns the ref of the leaf covering key.
func (c *Client) locate(key []byte) (ref, error) {
	defer c.ep.SetStep(c.label(StepInternalCache))
	k := ikeyOf(key) // the cache's search and the node's share it
	n, err := c.bottom(key, &k)
	if err != nil {
		return ref{}, err
	}
	c.ep.Compute(cost.NodeSearch(len(n.ents)))
	return refAt(n, n.childOf(&k)), nil
}

// resolve finds the leaf covering key after the leaf or table at r showed
// version seen instead of r.version (section 3.2.2): the bottom-level
// node is re-read into the cache; if its entry still disagrees with what
// the leaf says, the leaf header decides, following right siblings (and
// dead leaves to the leaf that absorbed them).
func (c *Client) resolve(r ref, key []byte, seen uint64) (ref, error) {
	n, err := c.refresh(key)
	if err != nil {
		return ref{}, err
	}
	nr := refAt(n, n.childFor(key))
	if nr.leaf != r.leaf || nr.version == seen {
		return nr, nil
	}
	g := &c.t.G
	buf := make([]byte, g.LeafHdr)
	a := nr.leaf
	for {
		if err := c.ep.Read(buf, a); err != nil {
			return ref{}, fmt.Errorf("read leaf header %v: %w", a, err)
		}
		c.ep.Compute(cost.Checksum(g.LeafHdr))
		h, ok := g.decodeLeafHeader(buf)
		switch {
		case !ok:
			c.ep.Backoff(0)
			continue
		case h.flags&flagDead != 0:
			a = h.sibling
		case !contains(h.low, h.high, h.flags&flagInf != 0, key) && bytes.Compare(key, h.low) >= 0:
			a = h.sibling
		case !contains(h.low, h.high, h.flags&flagInf != 0, key):
			return c.locateRemote(key)
		default:
			return ref{leaf: a, version: h.version, fp: h.fp, low: h.low, high: h.high, inf: h.flags&flagInf != 0, parent: nr.parent}, nil
		}
	}
}

// locateRemote re-reads the bottom level for key, bypassing what is cached.
func (c *Client) locateRemote(key []byte) (ref, error) {
	n, err := c.refresh(key)
	if err != nil {
		return ref{}, err
	}
	return refAt(n, n.childFor(key)), nil
}
