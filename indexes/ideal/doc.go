// Package ideal is the papers' "Expected" line (DMTree FAST'26, section 2.2
// and Figure 3): the verbs a range index on disaggregated memory could not
// do without. It is a bound, not an index.
//
// # Layout
//
// Entries live in arrays on the memory nodes, one slot per key, bulk-loaded
// keys contiguous in key order (so a scan of them is one READ). A slot is
//
//	[0, K)        key
//	[K, K+V)      value
//	[K+V, K+V+8)  check: CRC-32C of key and value with bit 0 set; 0 = empty
//
// and slots are spaced a power of two apart up to 64 bytes (multiples of 64
// beyond), so that in paper memory mode an entry never straddles a
// cacheline and lands whole.
//
// # Verbs per operation
//
//	search  1 READ of exactly the entry
//	insert  2: READ of the empty slot, WRITE of the entry
//	update  2: READ of the entry, WRITE of the entry
//	delete  2: READ of the entry, WRITE of its check word
//	scan    1 READ per run of contiguous slots (1 for bulk-loaded keys)
//
// An absent key costs no verb: the oracle below knows it is absent.
//
// # What it omits
//
// The location of every key comes from an oracle: one sorted directory
// shared by all compute nodes in process memory, consulted and updated at no
// cost (a hash table of the packed fixed-width keys finds a key, a B-tree
// of their first 16 bytes as integers keeps the key order for scans). No
// index can have it: it stands for perfect, free, always-coherent caching.
// Inserts and deletes of one key are serialised by a striped lock of the
// oracle, standing in for the lock any real index needs; it issues no
// verb. Updates hold it across their verbs only where an entry's WRITE
// may land in pieces (strict memory mode, or entries over 64 bytes): in
// paper mode an entry of at most 64 bytes sits in one cacheline and lands
// whole, so two updates of one key are ordered by the memory like any two
// WRITEs. There an update takes the lock only to check the key and count
// itself, and an insert or delete waits for the key's counted updates to
// land before it changes the key's liveness. The
// bound's update is then the two RDMA requests of section 2.2.3 with no
// wait behind a hot key's other writers, which is how the artifact's
// plots draw Expected Update under Zipfian updates (at about 30 Mops,
// muouim/aefast26 AE/Plot/fig12/micro_update_zip.py). No local CPU work
// is charged. A READ that sees a torn entry (possible in strict
// memory mode) is retried, the only case where an operation issues more
// verbs than listed. New slots come from the chunk allocator, whose rare RPCs
// are the only other extra verbs.
//
// The oracle is why the bound runs only where every compute node is in one
// process (sim, local, and tcp with in-process compute nodes): attaching
// from a compute node of its own (indexes.Env.Attach) fails, naming the
// reason (Spec.Oracle), and the conformance suite's Split case skips it.
package ideal
