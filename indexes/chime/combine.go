package chime

import "github.com/dmbench/dmbench/indexes/combine"

// Read delegation and write combining, which CHIME takes from SMART and
// the DMTree artifact's CHIME build enables (TREE_ENABLE_READ_DELEGATION,
// TREE_ENABLE_WRITE_COMBINING): the coroutines of one compute node that
// search, or write, one key at the same time share one remote operation
// through the node's local lock table (package combine, after
// include/LocalLockTable.h). A writing winner takes the latest value
// dropped into the key's combining buffer under the leaf lock, right
// before it builds its entry WRITE (where CHIME's Tree.cpp calls
// get_combining_value), and every writer queued by then returns with its
// result. A search winner closes its round right before the READ that
// answers it. Searches queue only while at most readWindow are queued on
// the key (MAX_HOCL_HANDOVER); writes without bound. Deletes are not
// combined.

// readWindow is the artifact's MAX_HOCL_HANDOVER.
const readWindow = 8

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

func newCombining() *combining {
	c := &combining{}
	c.reads.Window = readWindow
	return c
}

// Search returns key's value, with read delegation when it is on.
func (c *client) Search(key []byte) ([]byte, bool, error) {
	if c.comb == nil {
		return c.search(key)
	}
	r, handed := c.comb.reads.Do(c.ep, string(key), nil, func(r *combine.Round[searchResult]) searchResult {
		c.cut = func() []byte { return r.Snapshot() }
		defer func() { c.cut = nil }()
		val, found, err := c.search(key)
		return searchResult{val, found, err}
	})
	if handed && r.val != nil {
		return append([]byte(nil), r.val...), r.found, r.err
	}
	return r.val, r.found, r.err
}

// Insert adds key or replaces its value.
func (c *client) Insert(key, val []byte) error { return c.combinedWrite(opInsert, key, val) }

// Update replaces key's value.
func (c *client) Update(key, val []byte) error { return c.combinedWrite(opUpdate, key, val) }

// Delete removes key.
func (c *client) Delete(key []byte) error { return c.write(opDelete, key, nil) }

// combinedWrite is Insert or Update, with write combining when it is on.
func (c *client) combinedWrite(kind writeKind, key, val []byte) error {
	if c.comb == nil {
		return c.write(kind, key, val)
	}
	k := string([]byte{byte(kind)}) + string(key)
	err, _ := c.comb.writes.Do(c.ep, k, append([]byte(nil), val...), func(r *combine.Round[error]) error {
		c.cut = func() []byte { return r.Snapshot() }
		defer func() { c.cut = nil }()
		return c.write(kind, key, val)
	})
	return err
}

// combined closes the round the client leads, if any, and returns the
// value its WRITE carries: the last one dropped into the key's combining
// buffer (val outside a round).
func (c *client) combined(val []byte) []byte {
	if c.cut == nil {
		return val
	}
	if v := c.cut(); v != nil {
		return v
	}
	return val
}

// CombiningSizes returns, summed over compute nodes, how many operations
// each search round and each write round served.
func (x *Chime) CombiningSizes() (reads, writes combine.Sizes) {
	for _, id := range x.env.Fabric.Config().ComputeNodeIDs() {
		if c := x.comb[id]; c != nil {
			reads.Merge(c.reads.Sizes())
			writes.Merge(c.writes.Sizes())
		}
	}
	return reads, writes
}
