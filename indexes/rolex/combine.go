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
// first leaf READ. Searches and writes share locate, so the search's cut
// there (CutRead) leaves a write round open. Searches queue only while at
// most combine.ReadWindow are queued on the key (MAX_HOCL_HANDOVER);
// writes without bound. Deletes are not combined (the port has none).

// Search returns key's value, with read delegation when it is on.
func (c *client) Search(key []byte) ([]byte, bool, error) {
	return c.comb.Search(key, func() ([]byte, bool, error) { return c.search(key) })
}

// Insert adds key or replaces its value.
func (c *client) Insert(key, val []byte) error {
	return c.comb.Write(combine.Insert, key, val, func() error { return c.insert(key, val) })
}

// Update replaces the value of key.
func (c *client) Update(key, val []byte) error {
	return c.comb.Write(combine.Update, key, val, func() error { return c.modify(key, val) })
}

// Delete removes key.
func (c *client) Delete(key []byte) error { return c.modify(key, nil) }

// CombiningSizes returns, summed over compute nodes, how many operations
// each search round and each write round served.
func (x *Rolex) CombiningSizes() (reads, writes combine.Sizes) { return x.comb.Sizes() }
