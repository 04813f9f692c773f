// Package rolex is ROLEX (Li et al., FAST'23): a learned range index on
// disaggregated memory. Compute nodes cache piecewise-linear models that
// map a key to a position among the loaded keys within an error bound
// epsilon; leaves of a fixed span sit in one preallocated array in remote
// memory, so a position divided by the span is a leaf address and a
// search is one doorbell batch of READs of the leaves the prediction
// covers. It follows the CHIME authors' port (github River861/ROLEX),
// which DMTree (FAST'26, section 5.1) ran with 24-byte keys, span 8 and
// epsilon 8, pre-trained on all loaded keys.
//
// # What the CHIME team's port changes from ROLEX
//
//   - No leaf table: leaf i sits at a computed offset (memory node i mod M,
//     slot i/M), where ROLEX's models index a leaf table of leaf numbers.
//   - One synonym leaf per leaf, found through a pointer in the leaf's
//     metadata (ROLEX keeps a synonym table with the models); an insert
//     into a full leaf shifts its last entry into the synonym leaf, and a
//     full synonym leaf is an assertion failure.
//   - No retraining: every compute server trains the models itself at
//     start-up from the full sorted key list, which it also keeps to pick
//     an insert's leaf; ROLEX trains on the memory side, compute nodes
//     fetch the models, and full synonym tables trigger retraining.
//   - Leaves carry a version byte per 63 bytes (SMART/CHIME style) and
//     writers lock a leaf with a masked CAS on a lock word next to it;
//     hopscotch leaves, vacancy bitmaps, metadata replication and
//     speculative reads exist behind build flags, all off in both the port
//     and DMTree's copy.
//   - SMART's read delegation and write combining (a local lock table per
//     compute node) are compiled out of the port's HEAD but defined in
//     the copy DMTree ran (muouim/aefast26 ROLEX/include/Common.h); the
//     combine parameter follows either, and DMTree's runs set it.
//   - Deletes are not implemented; scans read a key interval [from, to).
//
// # What this package does
//
// The port's leaf layout, verb sequences and lock; models trained at bulk
// load (shrinking-cone PLR with error epsilon-1, predictions widened to
// +-epsilon) and stored with the leaves' upper fences in a model region
// on memory node 0, which each compute node READs on its first operation
// (the original ROLEX's way: nothing passes between compute nodes by Go
// pointer). The fences (the last loaded key of each leaf) route an insert
// to its leaf exactly as the port's lower_bound on its key list does, at
// 1/span of its size. Synonym leaves form a chain (ROLEX's synonym list
// rather than the port's single leaf): a full leaf of the chain moves its
// upper half to a new synonym leaf linked after it, so the index never
// asserts; like the port it never retrains, so a key distribution far
// from the loaded one (an empty bulk load, ordered inserts past the
// loaded keys) grows long chains behind one leaf and its one lock: point
// operations read two of their leaves, scans and first visits all.
//
// # Leaf layout (K key, V value, S span bytes; offsets in the slot)
//
//	logical leaf:
//	[0]          node version
//	[1, 9)       synonym pointer (next leaf of the chain, 0 = none)
//	[9, ...)     S entries of [valid 1 B][key K][value V], sorted, packed
//	on the wire: the first 64 bytes as they are, then lines of
//	[version 1 B][63 logical bytes]
//	lock word:   8 B at round8(wire size); bit 0 is the lock
//	slot:        lock word end rounded up to 64 B
//
// With 8-byte keys and values and span 16 a leaf is 281 logical bytes,
// 285 on the wire (the port's figures), its lock word at 288 and its slot
// 320 B; with DMTree's 24-byte keys, 8-byte values and span 8: 273, 277,
// 280 and 320 B. A leaf READ or WRITE moves the wire size.
//
// # Model region (memory node 0, its address in the first word of the
// main region)
//
//	header 64 B: leaves, segments, loaded keys, memory nodes, body bytes
//	body: M leaf-array bases; per segment its first key (K), slope,
//	start and end positions (24 B); then leaves-1 upper fences (K each)
//
// # Verbs per operation (model cached; n = leaves the prediction covers,
// 2-3 with epsilon = span, widened to the key's fence-routed leaf t if
// needed; s = 0 if t has no synonym leaf, else 1)
//
//	first operation of a compute node: READ root word, READ header, READ
//	             the body (one batch of 1 MiB READs)
//	search       1 batch of n + s leaf READs: the predicted leaves and, of
//	             t's chain, the synonym leaf the node's cached first keys
//	             place the key in and the one after it (checked: first
//	             keys bracket the key, pointer unchanged); an unknown or
//	             changed chain costs one more batch per chain step
//	update       search batch, masked CAS (plain CAS with maskedcas=false)
//	             on t's lock word, READ of the leaf that held the key, 1
//	             batch: WRITE leaf + WRITE 8 B unlock = n + s + 4 verbs
//	delete       as update, the leaf WRITE without the entry
//	insert       1 batch of READs of the predicted leaves (the port's
//	             fetch, synonyms not read), lock of t, 1 batch READ of the
//	             key's leaf of the chain (and the next, as for a search),
//	             1 batch: WRITE leaf + unlock = n + 1 + s + 3 verbs in 4
//	             round trips; a full leaf adds a WRITE of a new synonym
//	             leaf at the head of the last batch (same memory node, so
//	             it lands before the pointer to it) and, when the node's
//	             allocator needs a chunk, one RPC
//	scan(n)      1 batch of READs of the leaves from the prediction of
//	             start to that of start+n (the port's interval) with their
//	             whole synonym chains; when the interval holds fewer than
//	             n entries, further batches over the following leaves,
//	             each sized to the entries still missing
//
// verbs_test.go checks these counts.
//
// # Read delegation and write combining (combine=true)
//
// The coroutines of one compute node that search one key at the same time
// share one search, and those that insert, or update, one key share one
// write (package combine, after the copy's include/LocalLockTable.h): the
// winner runs the operation above and the others return its result with
// no verb. A search round closes right before its first leaf READ, so it
// hands its answer only to searches that began before that READ; a write
// round closes under the leaf lock after the re-READ, where the copy's
// Rolex.cpp calls get_combining_value, and its leaf WRITE carries the last
// value dropped in by then. Searches queue only while at most 8 are
// queued on the key (MAX_HOCL_HANDOVER); deletes are not combined.
// Rolex.CombiningSizes reports the round sizes.
//
// # Compute nodes in processes
//
// Everything the compute nodes share is on the memory nodes: the root
// word (first word of memory node 0's main region) naming the model
// region, which holds the models, the leaves' upper fences and the leaf
// arrays' bases; the leaves with their synonym pointers and lock words;
// and the chunk allocator behind transport.Allocator (an RPC to the
// memory node). Models and fences never change after the bulk load (no
// retraining), so a compute node that attaches (indexes.Env.Attach) lays
// nothing out: New skips the empty model and leaf, and the node's first
// operation fetches the model region, as every compute node does in a
// single process. What stays in Go is per compute node: its copy of the
// model and the synonym chains it has seen, checked against the synonym
// pointers of every leaf it reads, and the allocator's current chunk.
// What searches build of it, the model and the chains, Rolex.CopyCaches
// copies from one compute node to another (indexes.CacheCopier).
// Info's MemoryBytes counts the leaf arrays and model region at the
// building node and the synonym leaves each instance allocated, so a
// split run's footprint is the sum over its compute nodes' instances.
//
// # Deviations
//
//   - Models come from the memory pool (above), not trained on each
//     compute server from the key list; fences replace that key list.
//   - Chained synonym leaves with half splits instead of one synonym leaf
//     that asserts when full; no retraining (as the port). A point
//     operation reads only the key's leaf t's synonym leaves (keys never
//     leave their leaf's chain), and of those only two when the node
//     knows the chain's first keys; the port reads the known synonym leaf
//     of every predicted leaf.
//   - Deletes exist: under the leaf lock the entry is removed and the
//     leaf rewritten; leaves never merge or leave a chain.
//   - An update or delete that no longer finds its key in the leaf it
//     searched, nor after it in the chain, re-reads the whole chain under
//     the lock (the key was deleted and inserted again in front).
//   - Slots are 64-byte aligned (the port packs them at 8) so the line
//     versions sit on real cachelines; transfers are the port's sizes.
//   - Scans return n entries in key order (the Client contract), starting
//     with the port's interval read.
//   - Segments measure a key by its exact distance from the segment's
//     first key, so keys of any size train without collisions.
//   - The port's HEAD locks with cas_mask_sync_without_sink (src/DSM.cpp),
//     which polls the thread's completion queue until its own completion
//     arrives, so the thread's other coroutines stand still meanwhile.
//     The copy DMTree ran locks with cas_sync, which yields to them as
//     every verb here does (ROLEX/src/Rolex.cpp, lock_node); a failed
//     attempt yields once more before retrying, here a Backoff of one
//     cache-line transfer.
//
// # Memory semantics
//
// A leaf READ is validated by the version byte of each 64-byte line
// (transport.ModePaper); in strict mode a line may mix old and new bytes
// under equal versions, so the registration declares PaperMode and the
// conformance suite logs strict-mode violations instead of failing.
package rolex
