package inner

import (
	"fmt"

	"github.com/dmbench/dmbench/cost"
	"github.com/dmbench/dmbench/transport"
)

// Protocol is how an index reads, locks and writes its internal nodes:
// the parts of the layer that Sherman and Marlin do differently. H is
// what the index needs to release a lock it took.
type Protocol[H any] interface {
	// ReadNode READs the node at addr, to which its parent gave range
	// rng, into buf until the image passes the index's check.
	ReadNode(buf []byte, addr transport.GAddr, rng KeyRange) error
	// LockInner takes the lock of the internal node at addr (range rng)
	// and READs the node into img.
	LockInner(addr transport.GAddr, rng KeyRange, img []byte) (H, error)
	// Unlock releases the lock h of the node at addr, after WRITing img,
	// the node sealed, back to it whole when img is not nil.
	Unlock(h H, addr transport.GAddr, img []byte) error
	// Seal readies a node image for a whole-node WRITE: its versions,
	// and its checksum where the index has one, with the work charged.
	Seal(img []byte)
}

// Client is the layer's part of one index client (one coroutine): its
// endpoint, the local work it has charged and not yet handed to the
// fabric, its node buffers and the path of the current operation. Its
// buffers are reused across operations and never shared.
type Client[H any] struct {
	EP transport.Endpoint
	t  *Tree
	p  Protocol[H]

	// Buf, Aux and Sib are node images: the layer READs internal nodes
	// it walks through into Aux, locks them into Buf, and builds split
	// halves and new roots in Aux and Sib. The index uses them for its
	// leaves between the layer's calls.
	Buf, Aux, Sib []byte

	cpu      int64 // local work charged but not yet handed to Compute
	stepWork int64 // the part of it that is the index's labelled step
	step     transport.Step
	path     [MaxLevels]pathStep
	// pathLen bounds the levels of path set since Begin, which clears
	// only those: clearing all of it cost more than a cached search.
	pathLen int
	// leaf is the location AtLeaf hands its visits: a pointer to a local
	// would escape through the visit and cost an allocation per operation.
	leaf Location
}

// pathStep is one internal node of the current operation's path: where it
// is and the key range the traversal believed it had.
type pathStep struct {
	addr transport.GAddr
	rng  KeyRange
}

// Init makes c a client of t on ep for an index with protocol p, with
// node buffers of nodeBytes; the work charged with ChargeStep is labelled
// step.
func (c *Client[H]) Init(t *Tree, ep transport.Endpoint, p Protocol[H], nodeBytes int, step transport.Step) {
	c.t, c.EP, c.p, c.step = t, ep, p, step
	c.Buf, c.Aux, c.Sib = make([]byte, nodeBytes), make([]byte, nodeBytes), make([]byte, nodeBytes)
}

// Charge adds local work; Flush hands it to the fabric before the next
// verb, so a run of small charges costs one Compute.
func (c *Client[H]) Charge(ns int64) { c.cpu += ns }

// ChargeStep adds local work of the index's labelled step (Sherman's node
// checksums, which RF-tree's Figure 8 breaks out of Sherman's time).
func (c *Client[H]) ChargeStep(ns int64) { c.stepWork += ns }

// Flush hands the work charged to the fabric, the labelled step's apart.
func (c *Client[H]) Flush() {
	if c.cpu > 0 {
		c.EP.Compute(c.cpu)
		c.cpu = 0
	}
	if c.stepWork > 0 {
		prev := c.EP.Step()
		c.EP.SetStep(c.step)
		c.EP.Compute(c.stepWork)
		c.EP.SetStep(prev)
		c.stepWork = 0
	}
}

func (c *Client[H]) Read(dst []byte, src transport.GAddr) error {
	c.Flush()
	return c.EP.Read(dst, src)
}

func (c *Client[H]) Write(dst transport.GAddr, src []byte) error {
	c.Flush()
	return c.EP.Write(dst, src)
}

func (c *Client[H]) CAS(a transport.GAddr, expect, swap uint64) (uint64, error) {
	c.Flush()
	return c.EP.CAS(a, expect, swap)
}

// Begin starts an operation (indexes.Core): no internal nodes passed yet.
func (c *Client[H]) Begin(string, []byte) error {
	clear(c.path[:c.pathLen])
	c.pathLen = 0
	return nil
}

// End finishes an operation (indexes.Core): it hands the work still
// charged to the fabric.
func (c *Client[H]) End(err error) error {
	c.Flush()
	return err
}

// AllocNode allocates a node of size bytes on the memory nodes in turn.
func (c *Client[H]) AllocNode(size int) (transport.GAddr, error) {
	c.Flush()
	a, err := c.t.Alloc(c.EP.Node()).Alloc(c.EP, uint64(size), nodeAlign)
	if err != nil {
		return 0, fmt.Errorf("allocating a node: %w", err)
	}
	c.t.NodeBytes.Add(uint64(size))
	return a, nil
}

func (c *Client[H]) cache() *nodeCache { return c.t.cache(c.EP.Node()) }

// cacheInsert caches a copy of the internal node img at a, charged.
func (c *Client[H]) cacheInsert(a transport.GAddr, img []byte) {
	c.Charge(cost.Copy(len(img)))
	c.cache().insert(a, img, c.EP.Rand())
}

// lookupCached is one index-cache lookup, charged.
func (c *Client[H]) lookupCached(lvl int, key []byte) *CachedNode {
	c.Charge(cost.CacheLookup())
	return c.cache().lookup(lvl, key)
}

// DropCached drops the cached node n (nil: none), found stale.
func (c *Client[H]) DropCached(n *CachedNode) {
	if n != nil {
		c.cache().invalidate(n)
	}
}

// JoinUnlock reports an error that ended an operation together with any
// error of the unlock that followed it.
func JoinUnlock(err, unlockErr error) error {
	if unlockErr != nil {
		return fmt.Errorf("%w (and unlocking: %v)", err, unlockErr)
	}
	return err
}
