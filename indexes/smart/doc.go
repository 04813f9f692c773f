// Package smart is SMART (Luo et al., "SMART: A High-Performance Adaptive
// Radix Tree for Disaggregated Memory", OSDI'23), the radix-tree baseline
// of DEX (VLDB'24), DMTree (FAST'26) and Dolphin, and P-SMART, the
// partitioned variant DEX section 8 measures. It follows the paper's
// design and the artifact (dmemsys/SMART, all options on: adaptive nodes,
// radix cache, read delegation, write combining, embedded leaf locks);
// variant=dex follows instead the copy of it DEX's evaluation ran (see
// Variants).
//
// # Layout (bytes; 8-byte keys and values unless said)
//
// The root slot is the first word of memory node 0's metadata area.
// Internal nodes and leaves are allocated in 256-byte aligned blocks,
// rounded up to 256 bytes, because slots keep offsets shifted right by 8
// (the artifact's allocator): a leaf occupies 256 bytes, a node 2,304.
// Info.MemoryBytes counts those blocks, as Dolphin's Table II does.
//
// Internal node, always allocated whole (2,064 bytes):
//
//	0    reverse pointer: the address of the slot pointing here (8)
//	8    header (8): depth byte; type (5 bits) and prefix length (3 bits);
//	     up to 6 compressed prefix bytes
//	16   256 slots of 8 bytes
//
// Its type (capacity 4, 8, 16, 32, 64, 128 or 256: the fine-grained
// homogeneous nodes) only bounds how many slot bytes a READ fetches:
// 16 + 8 x capacity = 48 ... 2,064 bytes. A node's slots are unsorted;
// the slot of a key byte is found by scanning the partial keys. A common
// prefix longer than 6 bytes becomes a chain of nodes.
//
// Slot (8 bytes, changed only by CAS): partial key (8 bits), leaf flag,
// leaf length or node type (7 bits), memory node id (8 bits), offset >> 8
// (40 bits). Zero is an empty slot; a leaf flag without an address is a
// tombstone (see Deletes).
//
// Leaf, one key-value pair, packed (34 bytes; 58 with 24-byte keys and
// 16-byte values):
//
//	0    reverse pointer (8)
//	8    valid byte (1)
//	9    CRC-64 of key and value (8)
//	17   key (K)
//	17+K value (V)
//	     lock byte (1): bit 0 lock, bit 1 dead
//
// # Operations and their verbs (golden counts in verbs_test.go)
//
// A lookup in the radix cache gives the deepest cached slot on the key's
// path; a miss READs the root slot (8 bytes) and the root, which are
// never cached (see Compute-side cache). Each level below costs one READ
// of a node sized by the slot's type (a second READ of the rest when the
// header shows the node has grown), and the leaf one READ of
// 34 bytes, checked by its CRC (read again on a mismatch). A node or leaf
// reached from a cached slot must carry that slot's address as its
// reverse pointer (and the expected depth, and be valid); otherwise the
// cached copy is dropped and the slot READ again (8 bytes).
//
// The counts below take the slot above the node an operation works in
// from the cache (its parent's copy). Where that parent is the root, as
// for the nodes of verbs_test.go's small tree, the root slot and the root
// are READ first: 2 READs more (8 bytes and the root's size).
//
//   - Search, warm cache: 1 READ (the leaf). Cold cache (a 4-entry root
//     and a 256-slot node above the leaf): READ root slot 8, READ root
//     48, READ node 2,064, READ leaf 34 = 4 READs.
//   - Update: READ leaf; lock (1 masked CAS: compare lock and dead bits,
//     set the lock bit); 1 WRITE of the 26 bytes after the reverse
//     pointer with new value, CRC, lock cleared = 3 verbs. An update to
//     the value the leaf holds stops after the READ (the artifact's
//     check; DEX's benchmark writes the key itself as an update's value,
//     test/newbench.cpp, so repeated updates of a hot key are such).
//   - Insert into a free slot: READ the node (its copy, if cached, has no
//     slot for the new byte, so the lookup takes the slot above it);
//     WRITE leaf 34; CAS the slot = 3 verbs. Into a full node: the same CAS into a slot past
//     its capacity ("insert behind"), then the type switch: 2 masked
//     CASes in one doorbell batch on the parent slot's and the header's
//     type bits = 5 verbs. A writer whose CAS behind the capacity loses
//     to an entry with its key byte, and follows that entry down, first
//     makes the switch the slot needs itself (the same batch), as the
//     entry's writer may not have yet (see Growth).
//   - Insert where a leaf with another key sits: READ leaf; one batch
//     WRITEs the new node (48) and leaf (34); CAS the slot; CAS the old
//     leaf's reverse pointer = 5 verbs (2 WRITEs in one post). A key that
//     departs inside a node's compressed prefix: the new node and leaf in
//     one batch, CAS the parent slot, masked CAS the old node's header
//     (depth and prefix, not its type bits), CAS its reverse pointer.
//   - Delete: READ leaf; lock; WRITE 26 bytes with valid 0 and the dead
//     bit (the lock is never released); CAS the slot to a tombstone = 4.
//   - Scan of 10 dense keys: READ the node covering the interval (2,064)
//     and the 10 leaves in one batch = 11 READs (13 in verbs_test.go,
//     whose node hangs from the root).
//
// With maskedcas=false every masked CAS becomes a plain CAS of the whole
// word, expecting the word as last read: the lock word as the leaf's READ
// showed it, unlocked; the header and slot as the node's READ showed them.
// A CAS that fails because other bits of the word changed is retried with
// the word it returned (the fabric's fallback: the failed CAS is the READ
// of a READ+CAS loop), so the fallback costs extra CASes exactly when
// neighbours of the lock or type bits change concurrently.
//
// # Compute-side cache
//
// Each compute node's clients share a radix cache (cache.go): copies of
// remote nodes' headers and slot arrays, each filed under its node's
// prefix (the key bytes above its slots), as the artifact's RadixCache
// files them (src/RadixCache.cpp add_to_cache). A lookup takes the
// deepest copy along the key that has a slot for the key's next byte,
// whether or not the copies above it are cached (search_from_cache
// collects the copies along the key and tries the deepest first), so
// evicting an upper node does not hide its cached descendants. Every
// node read at its own depth is admitted, and the nodes an insert
// creates, but the root: add_to_cache returns for it, in dmemsys/SMART
// and in DEX's copy alike. The root slot is not cached either: a lookup
// that finds no copy READs it (the artifact's get_root_ptr) and then the
// root. Space is counted against
// Env.CacheBytes (32 bytes plus the slots of the node's type per copy);
// admission and eviction go through one FIFO queue and free-byte counter
// per compute node, as the artifact's tbb::concurrent_queue and atomic
// counter: a ticket taken on the queue's tail line, a turn on one of its
// eight micro-queues (ticket locks), and the counter's line, so that
// concurrent admissions queue in virtual time as DEX section 8.2 observed
// (49% of CPU at 144 threads). A copy is dropped when a slot it holds proves
// stale, and after a type switch or prefix split of its node.
// Info.CacheBytes is the bytes in use; CacheHits counts lookups that used
// at least one cached node.
//
// # Read delegation and write combining
//
// A compute node's local lock table (combine.go) groups the searches and
// the writes (inserts and updates) of one key: the first is the leader,
// the others wait. Each table bucket is a transport Mutex held for a
// cache-line transfer. A waiting searcher takes the leader's answer; a
// waiting writer hands the leader its value, which the leader writes in
// place of its own.
//
// # Growth: reverse check and type switch
//
// Nodes grow in place (insert behind, then type switch); a parent slot
// with an old type makes a reader fetch the rest of the node after the
// header shows the new type. A slot behind the capacity is invisible to
// readers until the type covers it, so no insert into it or below it
// returns before the switch: its writer switches the type, and so does
// a writer that follows its entry there (to split its leaf, or further
// down); otherwise that second insert could return while a reader on
// another compute node, fetching the slots the type says, misses its key.
// Nodes and leaves that move under a new node (leaf split, prefix split)
// get their reverse pointer swung to their new slot, which is how a stale
// cached slot is detected.
//
// # P-SMART
//
// partitioned=true: Env.Partitions gives each compute node a key range
// (DEX's partitionedkeys; a client writing another node's key gets an
// error). A compute node's writers lock their leaves with local locks
// (transport Mutexes striped by leaf address) instead of the leaf lock
// word, so updates and deletes issue no RDMA atomics. Slots are still
// changed by CAS: they are lock-free in SMART, and which upper nodes P-SMART
// shares is not described (FACTS-indexes.md section 2). Each compute node's
// cache then holds its own key range's subtrees, which is where P-SMART's
// smaller traffic comes from.
//
// # Compute nodes in processes
//
// Everything compute nodes share is in memory: the root slot (the first
// word of memory node 0's meta area), nodes, leaves and their lock words.
// A compute node that attaches (indexes.Env.Attach) writes nothing at
// New, where a building one clears the root slot: its clients READ the
// root slot on every cache miss, as all clients do, and the tree is
// reached from there. What stays in Go is per compute node and
// each instance builds its own: the radix cache and its FIFO, the local
// lock table of read delegation and write combining, P-SMART's leaf
// locks (a compute node locks only leaves of its own partition, so no
// other node needs them), and the allocator, whose chunks come from the
// memory nodes' chunk server by RPC. Of these, searches change only the
// radix cache, which CopyCaches copies to give one compute node what
// another's searches left (the runner's per-node warm-up). P-SMART's
// partitions are Env.Partitions, the workload's, which every compute
// node is given.
// Info's MemoryBytes counts the blocks this instance allocated (the
// building one's include the bulk load): a split run's footprint is the
// sum over its compute nodes.
//
// # Deletes
//
// The artifact has no delete (dmemsys/SMART issue #15; DEX's wrapper makes
// it a no-op). This one is the design's natural delete: lock the leaf,
// mark it invalid and dead, and CAS its slot to a tombstone that keeps the
// slot's partial key. Slots never return to empty, so a key byte keeps
// one slot in a node for good: otherwise two inserters that read a node
// before and after a delete could claim two slots for one byte. An insert
// of the key reuses the tombstone. A lock attempt on a dead leaf fails,
// and the writer reads the slot again. If a leaf split moved the dead
// leaf's entry meanwhile, the delete follows it down. Nodes are not
// merged or freed.
//
// # Scans
//
// SMART scans a key interval (its range query takes [from, to)); Scan is
// by count. The first interval is [start, start+n) read as big-endian
// numbers, what DEX and DMTree pass: with dense keys it returns the n
// keys in one pass. With sparse keys the next intervals follow, sized by
// the density seen (widened by a key byte while nothing is found). Each
// interval is SMART's range query: from the deepest cached slot covering
// it, level by level, one doorbell batch of READs per level for every
// node and leaf in range, one READ per leaf; results are sorted locally.
//
// # Variants: DEX's copy of SMART (variant=dex)
//
// variant=dmemsys (the default) is everything above: dmemsys/SMART, as
// the DMTree artifact also runs it (muouim/aefast26 SMART/). variant=dex
// is the copy DEX's section 8 measured for SMART and P-SMART (Table 2,
// Figures 6, 7 and 11): baotonglu/dex include/smart/ and src/smart.cpp, with
// include/ and src/ below meaning that repository. Its code is
// dmemsys/SMART's, put in a namespace (the radix cache,
// src/RadixCache.cpp, and the local lock table,
// include/smart/LocalLockTable.h, are the same code), with these
// differences, all followed by variant=dex:
//
//   - Leaf: the C++ struct unpacked (include/smart/Node.h:28-112, the
//     packed attribute commented out at :112) with an 8-byte lock word
//     (:52; NO_MASK at :9): 48 bytes with 8-byte keys and values
//     (layout.go, newDexLeafLayout). A leaf slot's length is 48
//     (src/smart.cpp:782) and a leaf READ moves 48 bytes (:183-185); the
//     allocator still rounds it to a 256-byte block.
//   - Leaf lock: a plain CAS of that word from 0 to all ones, at the
//     leaf's lock offset (src/smart.cpp:518, 529-532), retried as is
//     while it fails (:581-589; here at once, see below); no masked CAS (the masked calls are
//     commented out, :533-534). The holder unlocks with the update's
//     WRITE of the whole leaf, the lock word zeroed (:615-618), 48 bytes
//     from the reverse pointer on, as its READ showed it.
//   - Node types: smart.h defines TREE_ENABLE_ART (:64) only after it
//     includes RadixCache.h (:7), which includes Node.h (RadixCache.h:5),
//     and DEX's CMakeLists.txt never defines it, while dmemsys/SMART's
//     does (CMakeLists.txt:70). Node.h's node_type_to_num and
//     num_to_node_type are therefore compiled with every type read as
//     NODE_256 (Node.h:137-139, 161-163): new nodes are made NODE_256
//     (src/smart.cpp:885), every node READ fetches 2,064 bytes (:799-801),
//     every new node is WRITTEN whole (:911-912), a cached copy holds 256
//     slots (include/smart/NormalCache.h:28-37), and an insert scans 256
//     slots (src/smart.cpp:361-415), so no node is ever full: the insert
//     behind and the type switch (:417-441) never run. Bulk loading and
//     inserts here make every node of the 256-slot type too.
//   - Prefix split: the old node's header is READ (8 bytes), then changed
//     by a plain CAS of the whole word that keeps the type bits the READ
//     showed (src/smart.cpp:336-344), where dmemsys/SMART posts one masked
//     CAS.
//   - The type switch's two CASes are plain and one after the other
//     (src/smart.cpp:1018-1024), not one batch of masked CASes; they
//     never run (above), and so are not modelled.
//
// The rest is as in dmemsys/SMART, and as in the default variant: the
// radix cache (TREE_ENABLE_CACHE, src/smart.cpp:21; CACHE_ENABLE_ART,
// RadixCache.h:18; its size in MB from the benchmark, smart_wrapper.h:19-20),
// read delegation, in-place updates, the embedded lock and write
// combining on (smart.h:59-63; TREE_TEST_ROWEX_ART off, :60, and
// TREE_TEST_HOCL_HANDOVER undefined), the search path, and an insert of
// a present key, which updates it in place (src/smart.cpp:207-248; the
// wrapper's insert and update both call Tree::insert,
// smart_wrapper.h:24-39). DEX's copy has no delete (smart_wrapper.h:41-44
// returns): variant=dex deletes as above, its dead leaf's lock word
// left at 2 (neither free nor locked). Nor has it code of its own for
// P-SMART (its benchmark partitions only DEX, test/newbench.cpp:481):
// partitioned=true is P-SMART as above with either variant. maskedcas
// has no effect with variant=dex; Info lists it as set.
//
// Verbs of variant=dex (golden counts in verbs_test.go), where they
// differ from those above:
//
//   - Search, warm cache: 1 READ of 48 bytes. Cold cache: READ root slot
//     8, root 2,064, node 2,064, leaf 48 = 4 READs.
//   - Update: READ leaf 48; CAS the lock word; WRITE the leaf 48 = 3
//     verbs (112 bytes with the CAS's 8 out and 8 back).
//   - Insert into a free slot: READ node 2,064; WRITE leaf 48; CAS the
//     slot = 3 verbs. Never behind a node's capacity.
//   - Insert where a leaf with another key sits: READ leaf 48; one batch
//     WRITEs the new node (2,064) and leaf (48); CAS the slot; CAS the old
//     leaf's reverse pointer = 5 verbs. A key that departs inside a
//     node's compressed prefix: the batch, CAS the parent slot, READ the
//     old node's header (8), CAS it, CAS its reverse pointer.
//   - Delete: READ leaf 48; CAS the lock word; WRITE the leaf 48; CAS the
//     slot to a tombstone = 4 verbs.
//   - Scan: nodes are READ whole (2,064 bytes), leaves 48 bytes each.
//
// The whole-leaf WRITE carries the reverse pointer the update's READ
// saw; a leaf split that swung it between that READ and the WRITE is
// undone, as in DEX's copy. A reader from a cached slot then finds the
// reverse pointer wrong and reads the slot from memory (a stale cached
// slot that matches it leads to the same leaf, whose key and validity
// are checked, and a negative answer is confirmed as above), so answers
// stay correct; the artifact's repair CAS of reverse pointers, left out
// here (see below), would also mend it.
//
// # Deviations from the artifact, and why
//
//   - The range query READs the node its cached slot leads to instead of
//     trusting a cached copy of it: a copy may lack keys inserted since,
//     and a scan must return every key present throughout it.
//   - Writers update reverse pointers with a CAS they wait for, before
//     returning (the artifact posts it unsignaled); and a search, update
//     or delete whose negative answer rests on a slot from the cache reads
//     that slot once more. Without both, a client with a stale cache could
//     miss a key whose insert had already returned to a client that saw
//     it. The artifact's repair CAS of stale reverse pointers is not
//     needed then, and is left out: racing a move it could swing a
//     reverse pointer back.
//   - A writer that follows another writer's entry behind a node's
//     capacity makes the type switch itself before going on (see
//     Growth): the paper does not describe that race, and without the
//     switch an insert could return with its key in a slot no reader
//     fetches.
//   - An in-place update WRITEs the leaf from its valid byte on (26 of 34
//     bytes), not the reverse pointer its READ saw, which a concurrent
//     leaf split may have swung.
//   - Read delegation and write combining keep linearizability: a waiter
//     takes the leader's answer only if it joined before the leader
//     posted the READ the answer rests on, and rides on the leader's
//     WRITE only if it joined before the leader took the values (just
//     before that WRITE); the others are woken to try again, and a
//     searcher arriving after the leader's leaf READ searches on its own.
//     That READ is not always the leader's last: a found key rests on
//     its leaf's READ, and a negative answer on the READ of the node or
//     leaf a cached slot led to (not on the READ confirming that slot,
//     between which an insert can complete), or, past a slot read from
//     memory, on that slot's READ (see descend). The artifact hands the
//     answer to everyone queued when the leader finishes, so it combines
//     more.
//   - An update whose value equals the leaf's is skipped after the READ,
//     as in the artifact, but only when no other writer's value rides on
//     it (that writer may have called after the READ).
//   - Lock spinning retries at once after a cache-line transfer; the
//     artifact yields to its other coroutines.
//   - BulkLoad writes the tree the loading inserts would build, out of
//     simulated time, with each node of the smallest type holding it.
//   - DEX's benchmark updates a key with the key itself as value over a
//     load of key+1 (baotonglu/dex test/newbench.cpp:182,
//     include/smart/smart_wrapper.h:98), so the skip of an update to the
//     value a leaf holds (src/smart.cpp:216, done here too, in both
//     variants) spares every update of a key but the first; that is the
//     workload's doing, not the index's.
//
// Strict memory mode needs nothing more: slots, headers and lock words
// are single aligned words, and a leaf torn by a concurrent WRITE fails
// its CRC and is read again.
package smart
