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
// answers it. Searches queue only while at most combine.ReadWindow are
// queued on the key (MAX_HOCL_HANDOVER); writes without bound. Deletes
// are not combined.

// Search returns key's value, with read delegation when it is on.
func (c *client) Search(key []byte) ([]byte, bool, error) {
	return c.comb.Search(key, func() ([]byte, bool, error) { return c.search(key) })
}

// Insert adds key or replaces its value.
func (c *client) Insert(key, val []byte) error {
	return c.comb.Write(combine.Insert, key, val, func() error { return c.write(opInsert, key, val) })
}

// Update replaces key's value.
func (c *client) Update(key, val []byte) error {
	return c.comb.Write(combine.Update, key, val, func() error { return c.write(opUpdate, key, val) })
}

// Delete removes key.
func (c *client) Delete(key []byte) error { return c.write(opDelete, key, nil) }

// CombiningSizes returns, summed over compute nodes, how many operations
// each search round and each write round served.
func (x *Chime) CombiningSizes() (reads, writes combine.Sizes) { return x.comb.Sizes() }
