package fpbtree

import (
	"github.com/dmbench/dmbench/indexes/combine"
)

// Read delegation and write combining (DMTree section 4.1, after SMART):
// the clients of one compute node that search, or write, the same key at
// the same time share one remote operation through the node's local lock
// table (package combine, which follows the DMTree artifact's
// DMTree/include/LocalLockTable.h). A writer drops its value into the
// key's combining buffer and queues on the key's ticket; the winner at
// the head of the queue runs the write and, under the leaf lock right
// before its entry WRITE (where DMTree.cc calls get_combining_value),
// takes the latest buffered value and closes its round; every writer
// queued by then returns with the winner's result and no verb of its own.
// A search winner closes its round right before each table READ, so the
// readers it answers all began before the READs that decide the answer.
// Searches queue only while at most Options.ReadWindow are already
// queued on the key (the artifact's MAX_HOCL_HANDOVER = 8); more run on
// their own. Writes queue without bound: a round covers the queue at its
// snapshot. Inserts and updates queue separately (an update of an absent
// key fails, an insert does not); deletes are not combined.

// searchResult is what a search round hands over.
type searchResult struct {
	val   []byte
	found bool
	err   error
}

// combining is one compute node's local lock table for keys.
type combining struct {
	reads  combine.Table[searchResult]
	writes combine.Table[error]
}

// delegatedSearch is Search with read delegation.
func (c *Client) delegatedSearch(key []byte) ([]byte, bool, error) {
	r, handed := c.ns.combine.reads.Do(c.ep, string(key), nil, func(r *combine.Round[searchResult]) searchResult {
		c.cut = r
		defer func() { c.cut = nil }()
		val, found, err := c.search(key)
		return searchResult{val, found, err}
	})
	if handed && r.val != nil {
		return append([]byte(nil), r.val...), r.found, r.err
	}
	return r.val, r.found, r.err
}

// combinedWrite is Insert or Update with write combining.
func (c *Client) combinedWrite(kind writeKind, key, val []byte) error {
	k := string([]byte{byte(kind)}) + string(key)
	err, _ := c.ns.combine.writes.Do(c.ep, k, append([]byte(nil), val...), func(r *combine.Round[error]) error {
		c.cut = r
		defer func() { c.cut = nil }()
		return c.write(kind, key, val)
	})
	return err
}

// combined closes the caller's round, if it leads one, and returns the
// value its WRITE carries: the last one dropped into the key's combining
// buffer (val outside a round). Searches call it for the cut alone.
func (c *Client) combined(val []byte) []byte {
	if c.cut == nil {
		return val
	}
	if v := c.cut.Snapshot(); v != nil {
		return v
	}
	return val
}

// CombiningSizes returns, summed over compute nodes, how many operations
// each search round and each write round served.
func (t *Tree) CombiningSizes() (reads, writes combine.Sizes) {
	for _, id := range t.env.Fabric.Config().ComputeNodeIDs() {
		reads.Merge(t.nodes[id].combine.reads.Sizes())
		writes.Merge(t.nodes[id].combine.writes.Sizes())
	}
	return reads, writes
}
