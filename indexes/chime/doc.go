// Package chime is CHIME (Luo et al., SOSP'24): a B+-tree on disaggregated
// memory whose leaves are hopscotch hash tables, so that a point operation
// reads one key's neighbourhood instead of a whole leaf while a scan still
// reads a range of entries stored together. It follows the design the
// DMTree paper (FAST'26, sections 2.3-2.4) describes and measures, with
// the layouts and constants of the authors' code (github dmemsys/CHIME):
// internal span 64, leaf span 64, neighbourhood 8, a 1-byte version per
// 64-byte cacheline, metadata replicated per neighbourhood group, a
// vacancy bitmap in the lock word, and a hotspot buffer of 30% of the
// cache (30 MB of 100 MB).
//
// # Leaf layout
//
// K is the key size, V the value size, S the span, N the neighbourhood.
//
//	header, one cacheline:
//	[0, 8)       bitmap word: bits 0..B-1 vacancy bitmap (B = min(S, 63)
//	             buckets; a set bit: the bucket may have room); bit 63
//	             the lock under masked CAS
//	[8, 16)      lock word of maskedcas=false: 0 free, 1 held
//	[16]         flags: bit 0 = low fence is -inf
//	[17, 17+K)   low fence (inclusive), never changes
//	...          pad to 64
//
//	stream, from byte 64: cachelines of [version 1 B][63 B of items]
//	items, packed across cachelines (logical offsets):
//	group 0:  entry 0 .. entry N-1, then replica 0
//	group 1:  entry N .. entry 2N-1, then replica 1   ... ceil(S/N) groups
//	entry   (1+K+V B): [hdr][key K][value V]
//	replica (10+K B):  [hdr][flags: bit 0 = high fence +inf][sibling 8][high fence K]
//	hdr:    bit 7 occupied, bits 4-6 node version, bits 0-3 entry version
//
// A cacheline's version byte belongs to the item covering the line's first
// payload byte and repeats that item's version bits. Every rewrite of an
// entry advances its entry version; a split rewrites the whole old leaf
// with the next node version. A reader rejects an item whose owned
// version bytes disagree with its header (a WRITE landed half-way) and a
// read whose items disagree on the node version (a split landed during
// it). With 8-byte keys and values an entry is 17 B and a span-64 leaf
// 64 + 20 lines = 1344 B; with the DMTree setup (24 B keys, span 32) an
// entry is 33 B and a leaf 64 + 19 lines = 1280 B (the paper: "about
// 1.3 KB"). A neighbourhood READ of 8 such entries moves about 300 B.
//
// Any N consecutive slots contain the end of one group, so the READ of a
// neighbourhood always carries one replica of the high fence and sibling:
// a search validates its leaf without another READ.
//
// # Internal node layout (read and written whole)
//
//	[0, 8)    lock word (bit 63)
//	[8, 16)   front version
//	[16]      level (leaves are 0)   [17] flags: bit 0 low -inf, bit 1 high +inf
//	[18, 20)  separator count        [24, 32) right sibling
//	[32, 40)  leftmost child         [40, 40+2K) low and high fences
//	then span x [separator K][child 8]; the rear version in the last 8 bytes
//
// Compute nodes cache internal nodes keyed by (level, low fence) within
// (1 - hotspot) of Env.CacheBytes and walk down from a cached level-1 node.
//
// # Verbs per operation (warm cache; S, N as configured)
//
//	search       1 READ of the N-entry neighbourhood and its replica
//	             (2 READs in one doorbell when it wraps past the leaf's end),
//	             or, when the hotspot buffer knows a slot of the key's
//	             neighbourhood that held a key of its fingerprint, 1 READ of
//	             that one entry: 1+K+V bytes and the version bytes of the
//	             cachelines it opens (17-18 B with 8 B keys and values, 33-34
//	             B with the DMTree setup's 24 B keys), falling back to the
//	             neighbourhood when it holds another key
//	update       masked CAS on the lock bit (returns the vacancy bitmap),
//	             READ of the neighbourhood, then one doorbell: WRITE entry,
//	             WRITE bitmap word (unlock + new bitmap) = 4 verbs;
//	             maskedcas=false: CAS of the lock word, READ of the
//	             neighbourhood, WRITE entry and 8-byte WRITE of the lock
//	             word = 4 verbs. As leaf_node_update does (src/Tree.cpp,
//	             SPECULATIVE_READ), the READ under the lock is of the one
//	             entry the hotspot buffer names, as for a search, when it
//	             knows a slot of the key's neighbourhood, and falls back to
//	             the neighbourhood when that entry holds another key; a
//	             key found in the neighbourhood is recorded there
//	             (add_to_cache)
//	delete       as update, the entry WRITE clearing it; maskedcas=false
//	             as an insert's lock: CAS, READ of the bitmap word (8 B),
//	             READ of the neighbourhood, WRITE entry and a 16-byte
//	             WRITE of both words = 5 verbs
//	insert       masked CAS (maskedcas=false: CAS of the lock word, then
//	             an 8-byte READ of the bitmap word), READ of the
//	             neighbourhood extended to the first bucket the bitmap
//	             marks as having room, one doorbell of 1 + d entry WRITEs
//	             (d hopscotch displacements, each moved entry's new slot
//	             first) and the unlock WRITE (maskedcas=false: 16 bytes,
//	             bitmap and lock word); when no reachable slot can be
//	             freed: a READ of the whole leaf and then either that
//	             insert or a split
//	leaf split   READ whole leaf (above), one doorbell: WRITE new leaf,
//	             WRITE old leaf's stream, WRITE unlock; then for the parent:
//	             CAS lock, READ node, one doorbell: WRITE node, WRITE unlock
//	             (an internal split adds a WRITE of the new node; a root
//	             split a WRITE of the new root and a CAS of the root pointer)
//	scan         the interval [start, start+n) (section "Range query"):
//	             one doorbell of READs, each leaf the interval covers
//	             whole READ whole and, in the two leaves at its ends, the
//	             neighbourhoods of the interval's keys there (or the one
//	             entry the hotspot buffer names for a key), merged into
//	             READs of at most half a leaf of entries; a scan of one
//	             key reads as a search does, a scan of exactly two leaves
//	             2 READs of whole leaves. A speculative miss, a torn read
//	             or a split leaf adds a round of READs; an interval that
//	             holds fewer than n entries (sparse keys) adds rounds of
//	             whole leaves
//
// # Hotspot buffer (hotness-aware speculative read)
//
// CHIME's IdxCache (include/IdxCache.h): the hotspot share of the cache
// (hotspot=0.3, CHIME's 30 of 100 MB) holds
// 16-byte entries naming a leaf slot (leaf address 8, slot 2) with a
// 2-byte fingerprint of the key last found there and an access count, in
// 8-way buckets hashed by (leaf, slot). A search first finds its leaf in
// the cached level-1 node, then probes the bucket of each slot of the
// key's neighbourhood (N lookups, charged as cache lookups) and READs
// the slot with the highest count whose fingerprint matches. Every key a
// READ finds is recorded: a known slot counts one more hit (or restarts
// at 1 under a new fingerprint); a new slot takes a free way of its
// bucket or replaces the least frequently used one. A speculative READ
// that finds another key drops the slot's entry.
//
// # Range query
//
// CHIME's range query (src/Tree.cpp, Tree::range_query, built with
// FINE_GRAINED_RANGE_QUERY and GREEDY_RANGE_QUERY on, as the DMTree
// artifact's CHIME/exp/params/common.json builds it) takes [from, to);
// DMTree's driver (CHIME/test/ycsbc.cpp) passes [key, key+scan length),
// which holds the scan's records on its dense scan keys. Scan does the
// same with start+n, keys read as big-endian integers. The query takes
// the cached level-1 nodes the interval meets (search_range_from_cache)
// and from their separators the leaves and each leaf's fences. A leaf
// the interval covers whole is read whole; in a leaf at either end it
// hashes every key of the interval that falls there and reads that key's
// neighbourhood, or the slot the hotspot buffer names for it (probing
// the key's neighbourhood there: charged a cache lookup per bucket the
// query has not probed yet, as later probes of a bucket hit the CPU
// cache). A leaf's slot runs are merged, then joined while the join stays
// within maxLeafEntryPerIO, half a leaf's bytes in entries (include/
// Common.h: greedySizePerIO = transLeafSize / 2): one READ may carry
// gaps rather than pay a READ per run. All READs go out in one doorbell
// (DSM::read_batches_sync). A READ whose versions do not check is read
// again in the next round; a speculative READ that missed its key has the
// key's neighbourhood read in the next round; every key found is recorded
// in the hotspot buffer (add_to_cache). Once a leaf's keys of the
// interval have covered all its slots the rest are not hashed, as they
// would not change the READ.
//
// # Read delegation and write combining
//
// With combine=true (the default; the DMTree artifact's CHIME build
// defines TREE_ENABLE_READ_DELEGATION and TREE_ENABLE_WRITE_COMBINING)
// the coroutines of one compute node that search, or insert or update,
// the same key at once share one remote operation through package
// combine (after SMART's and the DMTree artifact's LocalLockTable.h): a
// writer drops its value into the key's combining buffer and takes a
// ticket; the winner takes the latest buffered value under the leaf lock
// right before building its entry WRITE (get_combining_value in CHIME's
// Tree.cpp) and hands its result to every writer queued by then. Searches
// queue while at most 8 are queued on the key (MAX_HOCL_HANDOVER).
// Unlike the artifact, a round covers only the operations queued before
// its deciding verb (package combine's doc). Chime.CombiningSizes reports
// round sizes.
//
// A stale cached level-1 node shows as a replica whose high fence is at
// or below the key: the operation follows the sibling (one more READ or
// lock) and drops the cached node. Writers of a leaf do not queue on a
// local lock before its remote lock: CHIME's code never calls its local
// lock table's leaf lock (src/Tree.cpp, lock_node, in dmemsys/CHIME and in
// the DMTree artifact alike, retries the CAS after yielding the
// coroutine), so clients of one compute node that write different keys of
// a hot leaf each retry their CAS at the memory node; only writers of the
// same key meet locally, through write combining.
//
// # maskedcas=false
//
// NVIDIA's MLNX_OFED 5.1 and later dropped masked CAS; the DMTree authors
// "replaced these verbs with alternative approaches" (section 5.1). Their
// artifact's CHIME (github muouim/aefast26, CHIME/src/Tree.cpp, lock_node
// and unlock_node) moves the lock to a word of its own after the bitmap
// word and takes it with a plain CAS from 0 to 1; an insert (lock_node
// with need_va) then READs the bitmap word, 8 bytes, in a round trip of
// its own, and releases with one 16-byte WRITE of the bitmap word and the
// cleared lock word; an update releases with an 8-byte WRITE of the lock
// word. This mode does the same (deletes, which the artifact lacks, lock
// as inserts do, to keep the bitmap exact). Info().Params records the
// mode.
//
// # Compute nodes in processes
//
// Everything the compute nodes share is on the memory nodes: the root
// pointer (first word of memory node 0's main region), the internal nodes
// and leaves with their versions, lock words and vacancy bitmaps, and the
// chunk allocator behind transport.Allocator (an RPC to the memory node).
// A compute node that attaches (indexes.Env.Attach) therefore lays
// nothing out: New skips the empty tree, and the node's first operation
// READs the root pointer and the root node and walks down to the tree the
// building node loaded, as a cold cache does in a single process; a root
// split by another node shows as a node whose level is too low or a high
// fence it must follow (B-link). What stays in Go is per compute node: the
// internal-node cache, the hotspot buffer, the combining buffers and the
// allocator's current chunk; a per-node warm-up copies all but the
// allocator from the node that searched to the others (CopyCaches).
// Info's MemoryBytes counts the nodes this instance allocated (the
// building node's counts the bulk load), so a split run's footprint is
// the sum over its compute nodes' instances.
//
// # Deviations
//
//   - Entries carry no 16-bit hop bitmap: a writer rehashes the keys of the
//     neighbourhood it has read to find displaceable entries (charged as
//     hashes). Reads never need the bitmap because they read the whole
//     neighbourhood, so only writers pay, and leaves lose 2 B per entry.
//   - The metadata replica follows its group rather than leading it, so an
//     N-slot read always holds exactly one replica; CHIME's code leads with
//     it and widens the read instead.
//   - Leaf versions are per item with 4-bit entry and 3-bit node versions;
//     CHIME packs 4+4 bits. The occupied bit takes the eighth.
//   - A set vacancy bit means "this bucket may have room": writers clear
//     it only for buckets they have read whole, so a stale bit costs one
//     more READ of the leaf, never a wrong placement.
//   - The hotspot buffer is sized to its budget up front and replaces
//     within a bucket; CHIME over-provisions its buckets and evicts the
//     least used of two sampled buckets when the budget runs out, then
//     skips 10 admissions. A speculative miss drops the entry; CHIME
//     keeps it until the slot's next record.
//   - Displacements never move an entry around the ring's end (from the
//     last slots to the first): a reader whose READ of the whole leaf runs
//     upwards while such a move lands could miss the entry. Keys still
//     wrap into the first slots when inserted; only moves are restricted.
//   - Leaves never merge; deletes leave empty slots for later inserts.
//   - Range queries: a level-1 node of the interval that the cache lacks
//     is READ on the way down and cached, and the query goes on; CHIME's
//     range_query, which assumes every internal node is cached (its code
//     marks the fallback as a known gap), instead searches every key of
//     the interval one by one when the cache holds none of them. A leaf whose replica shows a high fence below what
//     its cached parent said has split: the parent is dropped and the
//     sibling read in the next round; CHIME reads no leaf metadata here
//     and ends with a search of every key of the interval it did not find
//     (a split's moved keys among them; with sparse keys, every absent
//     key, up to n-1 searches for nothing). An interval holding fewer than
//     n entries (sparse keys) is followed by whole leaves in key order,
//     ceil(missing/span) per doorbell, until n are found: CHIME returns
//     the interval's entries only. A torn READ, node versions that differ
//     between a leaf's READs or a key seen twice (a hopscotch move in
//     flight; CHIME checks hop bitmaps, which dmbench's entries lack)
//     re-reads all of that leaf's READs; CHIME re-reads the one segment.
//     The hotspot probe covers the key's N slots as searches do; CHIME's
//     search_idx_from_cache probes N+1 (its upper bound is inclusive).
//   - Bulk load fills leaves and internal nodes to three quarters.
//
// # Memory semantics
//
// CHIME relies on 64-byte cacheline atomicity (transport.ModePaper): the
// per-cacheline versions say nothing about a line whose bytes land in any
// order, so in strict mode a search may return a torn value; the
// registration's PaperMode says so and the conformance suite logs such
// violations in strict mode instead of failing them.
package chime
