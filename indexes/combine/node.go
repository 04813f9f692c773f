package combine

import "github.com/dmbench/dmbench/transport"

// ReadWindow is the artifacts' MAX_HOCL_HANDOVER: a search queues on its
// key only while at most this many are queued there already, so that one
// slow winner cannot hold an unbounded line of readers.
const ReadWindow = 8

// Node is one compute node's local lock table: read delegation among its
// searches and write combining among its inserts and updates. The indexes
// keep one per compute node (Nodes); their clients reach it through a
// Client.
type Node struct {
	reads  Table[found]
	writes Table[error]
}

// found is a search's answer: what a read-delegation round hands over.
type found struct {
	val []byte
	ok  bool
	err error
}

// Nodes is the local lock tables of a fabric's compute nodes, indexed by
// NodeID. A nil Nodes is an index with combining off.
type Nodes []*Node

// NewNodes gives each compute node of cfg a table whose searches queue
// while at most readWindow are queued on their key (0: unbounded).
func NewNodes(cfg transport.Config, readWindow int) Nodes {
	ns := make(Nodes, cfg.NodeCount())
	for _, id := range cfg.ComputeNodeIDs() {
		ns[id] = &Node{reads: Table[found]{Window: readWindow}}
	}
	return ns
}

// Client is the table of ep's node as a client on ep uses it; without a
// table (combining off, or not a compute node) the Client runs every
// operation on its own.
func (ns Nodes) Client(ep transport.Endpoint) Client {
	c := Client{ep: ep}
	if n := int(ep.Node()); n < len(ns) {
		c.node = ns[n]
	}
	return c
}

// Sizes sums, over compute nodes, how many operations each search round
// and each write round served (what indexes.Combiner reports).
func (ns Nodes) Sizes() (reads, writes Sizes) {
	for _, n := range ns {
		if n != nil {
			reads.Merge(n.reads.Sizes())
			writes.Merge(n.writes.Sizes())
		}
	}
	return reads, writes
}

// CopyCounts gives compute node to the round counts of compute node from
// of src (ns itself, or the tables of another instance of the index), for
// an index that copies what one node's warm-up searches did to the others
// (indexes.CacheCopier); both nodes' queues are idle then.
func (ns Nodes) CopyCounts(src Nodes, from, to transport.NodeID) {
	if ns == nil {
		return
	}
	f, t := src[from], ns[to]
	t.reads.setSizes(f.reads.Sizes())
	t.writes.setSizes(f.writes.Sizes())
}

// WriteKind keeps the writes of one key in two queues: an update of an
// absent key fails where an insert adds it, so neither may take the
// other's result.
type WriteKind byte

// The kinds of combined writes. Deletes are not combined.
const (
	Insert WriteKind = iota
	Update
)

// Client runs one client's searches under read delegation and its
// inserts and updates under write combining, and knows the round the
// client leads while it runs one: the index closes that round (CutRead,
// CutWrite) right before the verb that decides its result. The zero
// Client runs every operation on its own.
type Client struct {
	node *Node
	ep   transport.Endpoint
	// read and write are the rounds the client leads, at most one at a
	// time: set while its operation runs as a winner, or on its own
	// because the read queue was full.
	read  *Round[found]
	write *Round[error]
}

// Search runs search, the index's own, once for the searches of key that
// share its round; a search handed the winner's answer gets its own copy
// of the value, as the winner's may be a buffer the index reuses.
func (c *Client) Search(key []byte, search func() ([]byte, bool, error)) ([]byte, bool, error) {
	if c.node == nil {
		return search()
	}
	r, handed := c.node.reads.Do(c.ep, key, nil, func(r *Round[found]) found {
		c.read = r
		defer func() { c.read = nil }()
		val, ok, err := search()
		return found{val, ok, err}
	})
	if handed && r.val != nil {
		return append([]byte(nil), r.val...), r.ok, r.err
	}
	return r.val, r.ok, r.err
}

// Write runs write, the index's insert or update of key with val, once
// for the writes of its kind that share its round; the round's WRITE
// carries the last value dropped in (CutWrite), and every write it
// covers returns its error.
func (c *Client) Write(kind WriteKind, key, val []byte, write func() error) error {
	if c.node == nil {
		return write()
	}
	k := append([]byte{byte(kind)}, key...)
	err, _ := c.node.writes.Do(c.ep, k, append([]byte(nil), val...), func(r *Round[error]) error {
		c.write = r
		defer func() { c.write = nil }()
		return write()
	})
	return err
}

// Reading reports whether the client runs a search under read
// delegation, as a winner or on its own past the read window: its answer
// may be handed to others, so every verb it rests on must follow the cut.
func (c *Client) Reading() bool { return c.read != nil }

// CutRead closes the search round the client leads, if any: the READ
// that follows decides its answer, and searches that arrive later wait
// for the next round.
func (c *Client) CutRead() { c.read.Snapshot() }

// CutWrite closes the write round the client leads, if any, and returns
// the value its WRITE carries: the last one dropped into the key's
// combining buffer, or val outside a round.
func (c *Client) CutWrite(val []byte) []byte {
	if v := c.write.Snapshot(); v != nil {
		return v
	}
	return val
}
