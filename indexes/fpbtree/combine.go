package fpbtree

import "github.com/dmbench/dmbench/indexes/combine"

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

// CombiningSizes returns, summed over compute nodes, how many operations
// each search round and each write round served.
func (t *Tree) CombiningSizes() (reads, writes combine.Sizes) { return t.comb.Sizes() }
