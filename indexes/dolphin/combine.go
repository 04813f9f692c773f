package dolphin

import "github.com/dmbench/dmbench/indexes/combine"

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
// only while at most combine.ReadWindow are queued on the key
// (MAX_HOCL_HANDOVER); inserts and updates queue apart (an update of an
// absent key fails, an insert does not); deletes are not combined. The
// paper's text does not mention the table; the combine parameter turns it
// off.

// CombiningSizes returns, summed over compute nodes, how many operations
// each read and write round served (indexes.Combiner).
func (x *Index) CombiningSizes() (reads, writes combine.Sizes) { return x.combs.Sizes() }
