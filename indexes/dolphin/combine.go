package dolphin

import (
	"github.com/dmbench/dmbench/indexes/combine"
)

// Read delegation and write combining: Dolphin's code keeps SMART's local
// lock table on (hust-anhang/Dolphin include/LocalLockTable.h; Tree.cpp's
// insert, which also serves updates, starts with
// acquire_local_write_lock and returns early on a write handover). The
// clients of one compute node that search, or write, the same key at the
// same time share one remote operation (package combine). A writer drops
// its value into the key's combining buffer; the winner closes its round
// and takes the latest value at the verb that decides its result: the
// locked READ of the leaf (which decides that the key is live, and where),
// and again, when the key was absent and a new key word or leaf is
// written, right before the WRITE or the leaf that makes the key visible.
// Every writer queued by then returns with the winner's result. Closing a
// round only at the value's WRITE would hand success to a writer that
// joined after a delete that made the WRITE void. A search winner closes
// its round right before each leaf READ, and before the READ of the
// parent slot that decides an absence (stillPoints). Searches queue
// only while at most 8 are queued on the key (MAX_HOCL_HANDOVER); inserts
// and updates queue apart (an update of an absent key fails, an insert
// does not); deletes are not combined. The paper's text does not mention
// the table; the combine parameter turns it off.

// searchResult is what a search round hands over.
type searchResult struct {
	val   []byte
	found bool
	err   error
}

// combining is one compute node's local lock table.
type combining struct {
	reads  combine.Table[searchResult]
	writes combine.Table[error]
}

func newCombining() *combining {
	c := &combining{}
	c.reads.Window = 8
	return c
}

// delegatedSearch is Search with read delegation.
func (c *client) delegatedSearch(key []byte) ([]byte, bool, error) {
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

// combinedWrite runs an insert (insert true) or update with write
// combining.
func (c *client) combinedWrite(insert bool, key, val []byte, write func(key, val []byte) error) error {
	kind := "u"
	if insert {
		kind = "i"
	}
	err, _ := c.comb.writes.Do(c.ep, kind+string(key), append([]byte(nil), val...), func(r *combine.Round[error]) error {
		c.cut = func() []byte { return r.Snapshot() }
		defer func() { c.cut = nil }()
		return write(key, val)
	})
	return err
}

// combined closes the caller's round, if it leads one, and returns the
// value its WRITE carries: the last one dropped into the key's combining
// buffer (val outside a round). Searches call it for the cut alone.
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
// each read and write round served (indexes.Combiner).
func (x *Index) CombiningSizes() (reads, writes combine.Sizes) {
	for _, c := range x.combs {
		reads.Merge(c.reads.Sizes())
		writes.Merge(c.writes.Sizes())
	}
	return reads, writes
}
