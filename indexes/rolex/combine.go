package rolex

import "github.com/dmbench/dmbench/indexes/combine"

// Read delegation and write combining, which the copy of the port that
// DMTree ran builds in (muouim/aefast26 ROLEX/include/Common.h defines
// TREE_ENABLE_READ_DELEGATION and TREE_ENABLE_WRITE_COMBINING; the port's
// own HEAD does not): the coroutines of one compute node that search, or
// write, one key at the same time share one remote operation through the
// node's local lock table (package combine, after ROLEX/include/
// LocalLockTable.h). A writing winner takes the latest value dropped into
// the key's combining buffer under the leaf lock, after its re-READ and
// right before it changes the leaf (where Rolex.cpp calls
// get_combining_value); a search winner closes its round right before its
// first leaf READ. Searches queue only while at most readWindow are
// queued on the key (MAX_HOCL_HANDOVER); writes without bound. Deletes
// are not combined (the port has none).

// readWindow is the port's MAX_HOCL_HANDOVER.
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
		c.readCut = r
		defer func() { c.readCut = nil }()
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

// Update replaces the value of key.
func (c *client) Update(key, val []byte) error { return c.combinedWrite(opUpdate, key, val) }

// Delete removes key.
func (c *client) Delete(key []byte) error { return c.modify(key, nil) }

// writeKind tells an insert round from an update round of the same key:
// an update of an absent key fails where an insert succeeds.
type writeKind byte

const (
	opInsert writeKind = iota
	opUpdate
)

// combinedWrite is Insert or Update, with write combining when it is on.
func (c *client) combinedWrite(kind writeKind, key, val []byte) error {
	write := func() error {
		if kind == opInsert {
			return c.insert(key, val)
		}
		return c.modify(key, val)
	}
	if c.comb == nil {
		return write()
	}
	k := string([]byte{byte(kind)}) + string(key)
	err, _ := c.comb.writes.Do(c.ep, k, append([]byte(nil), val...), func(r *combine.Round[error]) error {
		c.writeCut = r
		defer func() { c.writeCut = nil }()
		return write()
	})
	return err
}

// closeRead closes the search round the client leads, if any: the READ
// that follows decides its answer.
func (c *client) closeRead() {
	if c.readCut != nil {
		c.readCut.Snapshot()
	}
}

// combined closes the write round the client leads, if any, and returns
// the value its WRITE carries: the last one dropped into the key's
// combining buffer (val outside a round, or for a delete).
func (c *client) combined(val []byte) []byte {
	if c.writeCut == nil {
		return val
	}
	if v := c.writeCut.Snapshot(); v != nil && val != nil {
		return v
	}
	return val
}

// CombiningSizes returns, summed over compute nodes, how many operations
// each search round and each write round served.
func (x *Rolex) CombiningSizes() (reads, writes combine.Sizes) {
	for _, id := range x.env.Fabric.Config().ComputeNodeIDs() {
		if c := x.comb[id]; c != nil {
			reads.Merge(c.reads.Sizes())
			writes.Merge(c.writes.Sizes())
		}
	}
	return reads, writes
}
