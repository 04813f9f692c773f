// Package fpbtree is the FP-B+-tree on disaggregated memory of DMTree
// (FAST'26) section 2.3 and Figure 4: a B+-tree whose leaves carry a
// fingerprint table, one byte per slot, so that a point operation reads
// the table and then exactly one entry instead of the whole leaf. It is
// also the tree DMTree is built on (section 3.1): package dmtree supplies
// a Placement that moves tables and locks to compute nodes and switches on
// the section 4.1 optimisations through Options.
//
// # Layout (bytes; K key, V value, S span, I internal span)
//
// Leaf, on a memory node, 64-byte aligned:
//
//	[0, 8)          version ID (>= 1), bumped whenever the leaf's key range changes
//	[8, 16)         lock word (used only by DMTree's "cache" ablation step)
//	[16, 24)        right sibling
//	[24, 32)        fingerprint-table pointer (0: the table is in the leaf)
//	[32, 40)        flags: high fence is +inf; leaf merged away (dead)
//	[40, 40+K)      low fence;  [40+K, 40+2K) high fence
//	[40+2K, 48+2K)  CRC of the header (it spans two cachelines)
//	padding to H = roundup(48+2K, 64)                      (K=24: H = 128)
//	[H, H+T)        fingerprint-table block, T = roundup(S, 8) + 24:
//	                  S fingerprints (0 = empty slot, 0xff = freed), pad to 8,
//	                  version ID, CRC of fingerprints+version, lock word last
//	padding to 64                                          (S=32: T = 56 -> 64)
//	then S entry slots of stride P:
//	                  [0, 8) valid bit + version ID << 1, [8, 8+K) key, value,
//	                  and a CRC when 8+K+V > 64
//
// An entry is 8+K+V bytes (40 with K=24, V=8, as in the DMTree artifact).
// Entries are packed, P = the entry rounded to 8 bytes, as the artifact
// packs them (DMTree/include/LeafNode.h, get_entry_offset; ENABLE_ENTRY_CRC
// is off) and as the paper's memory footprint implies (section 5.3: 60.1
// GB for 10^9 entries): S=32, K=24, V=8 gives a 1,472-byte leaf. A packed
// entry may straddle two cachelines, and entries of up to 64 bytes carry
// no CRC (section 3.2.2), so the tree keeps two rules that make a torn
// READ of one harmless:
//   - a WRITE to a live slot changes only its value, one aligned word
//     when V <= 8 and K is a multiple of 8; otherwise the slot is instead
//     padded to a power of two so that it never straddles a cacheline;
//   - a slot a delete frees (fingerprint 0xff) is not reused until a split
//     or merge rewrites the leaf under a new version, so no reader still
//     holding the old fingerprint can meet a new entry landing there.
//
// A new entry is written before its fingerprint is, so no reader looks at
// it while it lands.
//
// Internal node, on a memory node: version, sibling, level and count,
// flags, low and high fences (32+2K bytes), I entries of K+24 bytes (key,
// child, child leaf's version ID and fingerprint-table pointer in the
// bottom level), CRC, lock word last; rounded to 64 bytes (1,664 with
// K=24, I=32). The root's address is the first word of memory node 0.
//
// # Verbs per operation (warm cache, no split; DMTree sections 2.3-2.4, Figure 9)
//
//	search  2: READ table (S+16 bytes), READ entry
//	update  5: CAS lock, READ table, READ entry, WRITE entry, WRITE unlock
//	insert  4: CAS lock, READ table (finds an empty slot and any matching
//	           fingerprint), WRITE entry, WRITE table (its lock word last: unlocks)
//	delete  5: CAS lock, READ table, READ entry, WRITE entry's valid word,
//	           WRITE table (unlocks)
//	scan    1 READ of the whole leaf per leaf visited
//
// All at the memory node. A fingerprint that matches another key costs one
// more entry READ (about S/255 of inserts, fewer of searches). A split READs
// the leaf, WRITEs the new leaf and the rewritten old one, and updates the
// parent with CAS, READ and a doorbell batch of node WRITE + unlock WRITE.
// A cache miss READs one node per level from the root, whose address each
// client keeps (DMTree/src/DMInner.cc get_root_addr: local_root_addr per
// coroutine): the 8-byte root pointer is READ on a client's first miss
// and again only when the node there has split since.
//
// # Consistency
//
// Every entry and table carries the version ID of its leaf, and the bottom
// internal entries carry the version their leaf had when they were written
// (DMTree section 3.2.2). A reader whose cached version disagrees with what
// it reads refreshes the bottom-level node, and if that still disagrees
// reads the leaf header and follows sibling pointers. A split or merge
// rewrites every slot of the leaves it changes under the new version, so a
// reader holding an old version never takes a moved entry for a live one.
// Internal nodes, tables and headers carry CRCs; writers hold the leaf lock.
// With Options.Combine (DMTree's write combining) a compute node's writers
// of one key first share one write (combine.go), then queue on a local
// lock per leaf lock word and may hand the word over (locallock.go); the
// basic FP-B+-tree CASes the word directly. The fpbtree index combines
// with combine=true: the DMTree artifact compiles read delegation and write
// combining into its tree unconditionally (include/KVConfig.h), and
// section 2.4's FP-B+-tree, at about half the Expected update rate under
// Zipfian updates, cannot be one whose hot leaves every writer CASes (DMTree's
// Figures 3 and 17 set it). A combined write or delegated
// search hands its result only to operations that queued before the verb
// that decides it, so every one of them overlaps that verb.
//
// # Time breakdown
//
// Operations label their time with the steps of DMTree's Table 1
// (steps.go), which the FP-B+-tree registers too, so its breakdown and
// DMTree's compare step by step. Here every table lives in its leaf on the
// memory node: table READs and WRITEs are fp_sync, fp_traversal is only
// hashing and probing, and the lock CAS and unlock WRITE are locking at
// the memory node. Package dmtree's doc lists what each step covers.
//
// # Compute nodes in processes
//
// Everything the compute nodes share is on the memory nodes: the root
// word (first word of memory node 0's main region), the nodes and leaves
// with their tables and lock words, and the chunk allocator behind
// transport.Allocator (an RPC to the memory node). A compute node that
// attaches (indexes.Env.Attach) therefore lays nothing out: NewTree skips
// the empty tree, and the first cache miss READs the root word and walks
// down to the tree the building node loaded, exactly as a cold cache does
// in a single process. What stays in Go is per compute node: the internal
// cache, the local lock queues, the combining buffers and the allocator's
// current chunk. Info's MemoryBytes counts the nodes this instance
// allocated (the building node's counts the bulk load), so a split run's
// footprint is the sum over its compute nodes' instances.
//
// # Deviations
//
//   - A slot a delete freed is not reused until the leaf is rewritten (see
//     Layout), so a leaf with deleted entries splits sooner. The artifact
//     has no delete.
//   - Entries of at most 64 bytes with a value of more than 8 bytes (the
//     16-byte values of Figure 18's 32-byte point), or with a key whose
//     length is not a multiple of 8, are padded to a power of two instead
//     of packed (see Layout).
//   - RebuildTable (compute-node failure) derives fingerprints from the
//     leaf's valid entries, so it turns freed slots back into empty ones
//     without a new version.
//   - Only the bottom internal level is cached (FIFO under Env.CacheBytes),
//     as DMTree does; the paper does not say how its FP-B+-tree caches.
//   - BulkLoad fills nodes to bulk_fill instead of preloading by inserts.
//   - Merges happen only between an emptied leaf and its right neighbour
//     under the same parent; internal nodes never merge; freed nodes are not
//     reclaimed (the paper uses a background thread).
package fpbtree
