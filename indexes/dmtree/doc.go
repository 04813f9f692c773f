// Package dmtree is DMTree (Wei et al., FAST'26): the FP-B+-tree of
// package fpbtree with its compute-side collaborative design (sections 3
// and 4). Fingerprint tables and leaf locks move from the memory node to
// the compute nodes, whose one-sided RDMA resources are otherwise idle, so
// that a point operation leaves the memory node with the verbs of the
// Expected line of Figure 3.
//
// # Mechanisms and where they are
//
//   - Private internal cache (3.2.1): bottom-level internal nodes only,
//     upper levels rebuilt locally, FIFO eviction within Env.CacheBytes
//     (fpbtree's nodeCache).
//   - Collaborative fingerprint storage (3.2.1, 3.2.3): each compute node
//     registers a region "dmtree-fp" (Fabric.AddRegion); a leaf's table
//     lives at the same offset on all of them, the primary on the node a
//     consistent-hashing ring with virtual nodes picks from the offset
//     (ring.go), cached copies elsewhere. Searches use the local copy when
//     its version matches the cached internal entry, else READ the primary
//     from its node; writers READ and WRITE only the primary and refresh
//     their own copy locally.
//   - Consistency (3.2.2): version IDs on entries, bottom internal entries
//     and tables; CRCs on tables, internal nodes, leaf headers, and entries
//     larger than a cacheline. A fingerprint miss or a mismatching entry in
//     a cached copy redirects to the primary; a version mismatch refreshes
//     the internal cache (and, if still stale, the leaf header decides).
//   - Compute-side locking (3.3): the lock word ends the primary table
//     block; CAS at the primary's node locks, the table WRITE of an insert
//     unlocks, an update unlocks with its own WRITE. Internal-node locks
//     stay at the end of each node on the memory node.
//   - Section 4.1: scans READ the table and then only the runs of
//     non-empty slots. Read delegation and write combining follow the
//     artifact's local lock table (muouim/aefast26,
//     DMTree/include/LocalLockTable.h; package combine, used from
//     fpbtree's combine.go): every writer of a key drops its value into
//     the key's combining buffer and takes a ticket; the winner at the
//     head of the queue writes, taking the latest buffered value right
//     before its entry WRITE (where DMTree.cc calls get_combining_value),
//     and every writer queued by then returns with its result and no verb.
//     Searches queue the same way while at most read_window (8, the
//     artifact's MAX_HOCL_HANDOVER) are queued on the key, and get the
//     winner's answer. Unlike the artifact, operations that queue after
//     the winner's deciding verb wait for the next round instead of taking
//     the result (linearizability; package combine's doc). Tree.
//     CombiningSizes reports the round sizes. Write combining also brings the local lock
//     table of the works section 4.1 follows (Sherman [49], named in 3.3
//     as what compute-side locking builds on): a node's writers queue
//     locally for a leaf lock, one CASes the lock word, and a holder with
//     a local waiter hands the word over (up to 8 times in a row, as
//     Sherman) without unlocking: no unlock WRITE for an update, the lock
//     word left set in an insert's table WRITE (fpbtree's locallock.go).
//     Without it, hot Zipfian leaves drown their lock word's atomic unit
//     in failed CASes.
//   - Splits, deletes with merge, scans across leaves: package fpbtree.
//   - Compute-node failure (4.3): FailComputeNode takes a node off the
//     ring; survivors rebuild the tables it was primary for from the leaves.
//   - Ablation (Figure 16): variant=fpbtree|rdmaopt|cache|concur.
//
// # Layout (bytes)
//
// Leaves and internal nodes as in package fpbtree (K=24, V=8, span 32: a
// 1,472-byte leaf with packed 40-byte entries; 1,664-byte internal
// nodes). The in-leaf table block is unused from variant cache
// on. A table block on a compute node, at a 64-byte slot of "dmtree-fp":
//
//	[0, 32)   fingerprints, one per leaf slot (0 = empty)
//	[32, 40)  version ID of the leaf
//	[40, 48)  CRC of fingerprints and version
//	[48, 56)  lock word (meaningful on the primary only)
//	[56, 64)  padding
//
// Table offsets are allocated from per-compute-node stripes of the region
// (slot t*C+i for node i), so allocation needs no coordination.
//
// # Verbs per operation (warm caches, primary table on a peer)
//
//	           memory node                        compute peer
//	search     READ entry (40 B)                  -  (READ table, 48 B, when the local copy misses)
//	update     READ entry, WRITE entry            CAS lock, READ table, WRITE unlock (8 B)
//	insert     WRITE entry                        CAS lock, READ table, WRITE table+unlock (56 B)
//	delete     READ entry, WRITE valid word       CAS lock, READ table, WRITE table+unlock
//	scan       1 READ of the non-empty slot runs  READ table
//	           per leaf
//
// With the primary on the caller's node the peer column is local memory
// access and is not counted. A search or update handed its result by
// read delegation or write combining issues no verb at all
// (combine_test.go: 100 updates of one key on one node, one round of 5
// verbs). A lock handed over locally saves the CAS of
// the next holder and the unlock WRITE of an update (handover_test.go). Variant cache: the lock CAS and the unlock
// WRITE go to the memory node (update 4 + 1, insert 3 + 2). Variants
// fpbtree and rdmaopt: package fpbtree's counts, all at the memory node
// (rdmaopt scans READ the table and the runs). The golden tests in
// verbs_test.go pin every one of these.
//
// # Time breakdown (Table 1)
//
// Operations label their time with the steps of Table 1 (section 5.3),
// defined in package fpbtree (steps.go) and registered under these names;
// each helper labels its own time, whoever calls it:
//
//	internal_cache  locating the leaf: cached bottom level, NodeSearch, and
//	                on a miss the remote traversal that refills the cache
//	fp_traversal    hashing the key, probing fingerprints, and reading a
//	                table on the caller's node (its copy or a local primary)
//	locking         local lock queue, lock CAS and its retries, an unlock
//	                WRITE of its own (an update's; a hand-over saves it)
//	fp_sync         READ and WRITE of a primary table on a peer, with the
//	                refresh of the local copy; an insert's unlock rides in
//	                its table WRITE and counts here
//	kv              entry READs and WRITEs (one per matching fingerprint),
//	                a scan's entry runs and their sorting
//
// A table access is fp_traversal or fp_sync by where the table is, the
// paper's split of local traversal from remote synchronisation: a search
// served by a current copy, or by a local primary, spends nothing in
// fp_sync, and a search whose copy is stale syncs from the primary. The
// rest is "other" (step 0): waiting for a read-delegation or
// write-combining batch, the re-location after a version mismatch, and a
// split's or merge's own verbs (the leaf lock, primary table and entry
// helpers they share with point operations label themselves as above).
// Compute is charged where it is incurred, never batched, so each charge
// falls in the step of the helper that incurs it. The ablation variants
// label the same way; in variant cache the lock CAS and unlock WRITE go
// to the memory node, still in locking.
//
// # Compute nodes in processes
//
// The tree itself travels through memory as in package fpbtree (root
// word, nodes, leaves). The fingerprint tables are on the compute nodes'
// "dmtree-fp" regions, reached by verbs like any other memory: a compute
// node that attaches (indexes.Env.Attach) looks the regions up
// (Fabric.Region) instead of registering them, and finds the primary
// tables the building node wrote during the bulk load there. Nothing else
// needs to travel: the ring is a pure function of the fabric's
// compute-node list and of vnodes (a parameter, so part of the
// superblock's identity), so every process builds the same one; the
// table allocator's stripes are per compute node, so each process
// allocates from its own node's stripe only, and the building node's
// stripe holds the bulk load's tables. Info's CacheBytes
// counts the tables this instance allocated; a split run's total is the
// sum over its compute nodes. Membership is the exception: the ring a
// FailComputeNode swaps is the calling process's, and with compute nodes
// in processes every survivor must be told (FailComputeNode on each; the
// rebuild from the leaves is idempotent while writers are quiesced), the
// failure detector's job that the paper leaves outside the index.
//
// # Deviations
//
//   - As package fpbtree: freed slots wait for the leaf's rewrite,
//     multi-word values keep padded slots, bulk load fill, merge only
//     with a right neighbour under the same parent, no node reclamation.
//   - Figure 16's steps: the basic FP-B+-tree already has read delegation
//     and write combining, and +RDMA Opt adds only scan filtering, though
//     section 4.1 lists combining among the RDMA optimisations. The
//     artifact compiles combining into its one tree (KVConfig.h), section
//     5.4 credits +RDMA Opt with scans alone, and section 2.4's
//     FP-B+-tree runs Zipfian updates at about half the Expected rate,
//     which without combining its hot leaf locks do not allow (0.011 Mops
//     at default scale, 215 verbs an update).
//   - Fingerprint storage has its own region (fp_region_bytes) rather than
//     sharing Env.CacheBytes with the internal cache; tables are never
//     spilled to the memory node when compute memory runs out (3.2.1).
//     The artifact gives each half of a compute server's memory
//     (RdmaConfig.h: kInnerCacheSize = kLeafCacheSize = kMemoryize / 2).
//   - Leaves keep their span. The artifact (USE_HASH_RESIZING, which the
//     paper does not describe) gives a split's new sibling twice the
//     leaf's capacity, up to 128 entries, once its internal cache is 99%
//     full (DMCache::adapt_capacity), so a tree grown under a small cache
//     has fewer, larger leaves and a bottom level that fits; dmbench's
//     bulk-loaded tree does not adapt (Figure 15's small memory sizes).
//   - A table whose primary is on the caller's own node is locked, read
//     and written as local memory (the transport's rule for a verb to the
//     caller's node: no NIC, the core pays the access). The artifact posts
//     those verbs as loopback RDMA through the node's own NIC and counts
//     them (muouim/aefast26 DMTree/src/DMVerbs.cc, rdma_cnt), so there
//     about one insert or update in six pays three round trips and six
//     NIC messages more than here, and Figure 17's compute counts include
//     them.
//   - Cached copies are refreshed when read from the primary, never pushed
//     asynchronously; a stale copy is found out by a miss or a mismatch.
//   - Failure recovery runs with writers quiesced and rebuilds eagerly;
//     membership is a ring swapped in each process (no failure detector,
//     no verbs for membership), and a ring lookup is not charged as
//     compute work.
//   - Read delegation and write combining hand a result only to the
//     operations that queued before the winner's deciding verb; the
//     artifact also hands it to those that queue while the winner
//     finishes, which is not linearizable (package combine).
//   - The paper does not say whether its write combining hands leaf locks
//     over locally; dmbench reads its citation of Sherman as yes, with
//     Sherman's limit of 8 hand-overs in a row. The artifact as published
//     compiles that out: ENABLE_HOCL is commented out in its KVConfig.h,
//     so DMTree.cc never calls LocalLockTable.h's acquire_local_lock and
//     its leaf lock is a CAS retry loop on the lock word. The local lock
//     here is that function's ticket lock (transport.LockTicket).
//   - Entries of at most 64 bytes carry no CRC, as in the paper, so the
//     index relies on paper-mode cacheline atomicity (Spec.PaperMode).
package dmtree
