// Package dex is DEX (Lu et al., VLDB'24): a B+-tree on disaggregated
// memory with compute-side logical partitioning (section 4), a scalable
// compute-side cache of inner and leaf nodes (section 5) and cost-aware
// offloading to memory-node cores (section 6). Sections 3-7 are the
// specification.
//
// # Node layout (1024 bytes, 8-byte keys and values)
//
//	0    lock word   bit 0: RDMA-locked; bits 1-63: version (shared nodes)
//	8    self        the node's global address
//	16   level (1 B) flags (1 B, bit 0: high fence is +inf) count (2 B) 4 B reserved
//	24   low fence (8 B)   32  high fence (8 B)   40-95 reserved (DEX's 96 B header)
//	96   entries: leaf (key 8 B, value 8 B) x 58; inner (separator 8 B, child 8 B) x 58
//
// Inner entry i's child holds [key i, key i+1); key 0 is the low fence.
// In a cached inner node a child pointer with bit 63 set is swizzled: it
// names a local frame. Nodes of every subtree rooted at level M
// (subtreelevel) live on one memory node; leaves never cross a partition
// boundary (bulk load and the empty tree break leaves at the bounds, and a
// repartitioning moves a bound only to a leaf's low fence).
//
// # Partitions and repartitioning (section 4, Figure 10)
//
// The partitions are a sorted list of key ranges, each owned by one
// compute node; a compute node may own several ranges or none (compute
// nodes beyond Env.Partitions are spares). A node is shared when its
// fences cross a range bound. Repartition(ep, from, to, split), on a
// thread of from, moves [bound, high) of from's range [low, high) to to,
// where bound is the first separator of a level-1 node at or above split
// strictly inside the range (an error when there is none):
//
//  1. from's thread takes the partition word's lock (one CAS; see
//     Compute nodes in processes), then from's ownership lock
//     exclusively, so that the operations in flight finish, marks
//     [split, high) frozen and lets go: new operations of from on frozen
//     keys (its clients' and forwarded ones) park on a lock the
//     repartitioning holds, the others go on (scans stop at the frozen
//     range and wait there). Merges that would touch it are skipped, so
//     its leaf boundaries stay.
//  2. The same thread flushes every dirty cached page of from intersecting
//     [split, high): 16 WRITEs of 1016 B (the body) per doorbell for pages
//     it can lock at once, one WRITE for each page another thread held,
//     waited for holding no other page.
//  3. It takes the ownership lock exclusively again and flushes what
//     operations below split dirtied meanwhile (the level-1 node holding
//     split, usually). It reads the path to split from the root pointer
//     (1 READ per owned node, 3 per shared one; the memory pool is
//     current) and picks bound in the level-1 node. Each owned node on the
//     path whose fences straddle bound becomes shared: one CAS moves its
//     lock word from the version it holds to the next (an owned node's
//     lock word is never locked), and from's cached copy records that
//     version, so a copy cached anywhere is older than the memory pool's.
//  4. One WRITE stages the new partitions in the table slot of their
//     version, then one RPC (2 B from, 4 B version, the bound) goes to
//     compute node to, whose handler takes to's ownership lock
//     exclusively, re-reads (3 READs each) the cached inner nodes that
//     were shared and become its own inside or around the moved range,
//     as owned nodes are never refreshed, and installs the new
//     partitions (read from the slot, one READ, if its instance knew
//     older ones than from's). to's cache for the range starts cold.
//     from installs them and publishes their version with one WRITE of
//     the partition word, which releases its lock.
//  5. from drops its cached pages wholly inside [bound, high), leaves
//     first, unswizzling each from a parent that stays, into a free list
//     its threads share; releases its locks; and the parked operations
//     route again: keys now owned by to are forwarded there.
//
// Only steps 3-5, whose verbs are a path's reads, a CAS per converted
// node, the RPC, the table's two WRITEs and the few pages dirtied during
// step 2, stop all of from's operations; step 2 is the flush that grows
// with the cache.
//
// # Compute nodes in processes
//
// A compute node may run an instance of its own (indexes.Env.Attach): the
// first builds and loads the tree, the others attach after the load, and
// they share only memory and RPCs. An attaching instance lays nothing out
// and reads from memory node 0's meta area (table.go) the root pointer
// (on its cache's first miss, as every instance does), M (the builder's
// resolution of subtreelevel, which depends on Env.Records) and the
// partitions last published. Caches, mapping tables, cooling maps,
// ownership locks, latches, allocator chunks, the moving averages of
// offloading and the round-robin of placement above M are each compute
// node's own.
//
// The partitions of version 0 are Env.Partitions, which every compute
// node derives alike; a repartitioning to version v writes them to table
// slot v%2 and v to the partition word (version << 1, with a lock bit
// that serialises repartitionings across compute nodes). A compute node
// takes part in every move of its own ranges, so its instance knows them;
// other compute nodes' ranges it may know from an older version. An
// operation it forwards on those is turned away by the former owner,
// which publishes the move before it serves again, and the sender reads
// the published partitions (partition word, slot, partition word:
// 3 READs) and routes again. With one instance for all compute nodes
// they share the partitions and nobody reads them.
//
// An instance serves the compute nodes Env.Compute names (all when nil):
// their clients, caches, and forwarding and hand-over RPCs; a client of
// another compute node on it panics, naming both. The memory nodes'
// offload handler, which needs only the node layout, is the builder's.
//
// # Offloading (section 6)
//
// A miss decides between fetching the node and offloading the rest of the
// operation to the memory node that holds its subtree, where it runs on
// one of the memory node's cores over local memory and changes at most a
// leaf (an operation that would split one comes back and is redone
// without offloading). With offload=cost the decision follows the
// artifact (baotonglu/dex: CacheManager::cold_to_hot_with_rpc,
// include/cache/leanstore_cache.h; LatencyCollector,
// include/cache/latency_collector.h; the traversals of
// include/tree/leanstore_tree.h), whose build always compiles it in
// (LATENCY_COLLECT):
//
//   - It is taken only at a missed inner node of level 1 to M under an
//     owned parent. A missed leaf is fetched with one READ and admitted
//     with P_A; the nodes above M and those under a shared parent are
//     fetched.
//   - Each thread keeps two moving averages of 50 samples: l_o, the time
//     to fetch and cache a missed node, and l_p, an offload's round trip.
//     Its first 50 decisions fetch and its next 50 offload, all sampled;
//     then a decision offloads when l_p < (L+1)(l_o + l_s)c, with l_s one
//     search of an inner node (cost.NodeSearch; the artifact's constant
//     is 40 ns) and c = 1.2 (the artifact's), is sampled with
//     probability 1%, and with probability 1% is the contrary one, always
//     sampled.
//   - Nothing is offloaded until the compute node's cache has handed out
//     every page (the artifact's dynamic phase); a decision to offload
//     before then fetches, sampled into l_o when it was to be sampled.
//
// With path-aware caching and cooling delegation inner nodes are seldom
// missed once the cache is warm, so offloads are rare unless the cache is
// small next to the inner levels (Table 2: 0.0002 RPCs per operation);
// and a thread offloads only after 50 fetches of inner nodes, which a
// short run with a warm cache may never see.
// offload=always offloads every miss at a level <= M, leaves included:
// section 6's Offload-only variant, whose cache holds the levels above M.
//
// # Verbs per operation (warm cache, no contention)
//
// TestVerbsPerOperation checks the rows marked * on the simulator
// (ConnectX-5 profile), by kind and bytes, for a client whose root path is
// cached; "owned" is a node inside the client's partition.
//
//	search/update/insert/delete, leaf cached *   0
//	search, leaf miss under an owned node *      1 READ (1024 B); admitted with P_A (0.1)
//	search, offloaded (offload=always) *         1 RPC (18 B out: op, level, node, key; 18 B back), 0 READ
//	update, offloaded *                          1 RPC (26 B out, 10 B back); a cached copy of the leaf is dropped
//	update, leaf not admitted (P_A = 0) *        1 READ + 1 WRITE (1016 B write-back)
//	shared inner node miss *                     3 READ: lock word, node, lock word (Algorithm 1 lines 1-10)
//	  (and then its owned leaf)                  + 1 READ (1024 B)
//	shared inner node cached *                   0 (fences checked; a mismatch refreshes from the root)
//	split, owned parent *                        0 (sibling admitted dirty) + allocator RPC per 8 MB chunk
//	dirty page cooled *                          1 WRITE (1016 B): written back when it starts cooling (section 5.2)
//	cooling page hit, clean page cooled/evicted * 0; the next miss READs it again
//	split, shared parent                         READ + CAS + READ (lock, fresh parent) + WRITE sibling + 2 WRITE (parent, unlock)
//	scan                                         one lookup per leaf over the fence keys; never offloaded
//	key owned by another node                    1 RPC to that compute node, which serves it
//
// # Ablation modes (section 8.3, Figure 8)
//
// partitioning and cache select the steps of Figure 8: the baseline RDMA
// B+-tree (partitioning=false, cache=false), +partitioning
// (partitioning=true, cache=false), +caching (both true, offload=off) and
// DEX (the defaults). Without the cache (direct.go) no node outlives the
// operation that read it: every traversal reads its path from the memory
// pool, starting at the root, and offloading is off. A shared node is read
// with the optimistic lock (READ lock word, READ node, READ lock word;
// Algorithm 1 lines 3-6) and written under its RDMA lock (READ lock word,
// CAS, READ node, then WRITE body and WRITE lock word in one doorbell
// batch). Without partitioning every node is shared and every compute node
// serves every key. With partitioning, a node inside one partition is read
// with one READ and written back without its lock word under a local
// latch of its owner's threads: no RDMA atomic. A full leaf is split by a
// lock-coupled walk from the root pointer (splitSharedPath, shared with the
// cached mode's split of shared nodes), one walk per split plus one that
// finds nothing to split. TestVerbsPerOperation checks, on the golden
// tree (L = 3 levels: root shared, level-1 node and leaf owned), with S of
// the L levels shared (all of them in the baseline; leaves are never
// shared under partitioning):
//
//	                               baseline (S = L)               +partitioning
//	search *                       3L READ                        3S + (L-S) READ
//	update, insert, delete *       3(L-1) READ, READ lock word,   3S + (L-S) READ,
//	                               CAS, READ leaf, WRITE 1016 B,  WRITE 1016 B
//	                               WRITE lock word
//	insert splitting a leaf *      32 READ, 8 CAS, 12 WRITE       22 READ, 2 CAS, 6 WRITE
//
// A cached shared node remembers the lock word it was read at; a refresh
// installs a fresh image only if it is newer, since a thread of the same
// compute node may have split a child under the node after the image was
// read (TestRefreshKeepsNewerCachedCopy).
//
// # Deviations
//
//   - A client asked for a key another compute node owns forwards the
//     operation by RPC to the owner (DEX routes requests to owners before
//     they reach the index); with partitionedkeys=true this never happens.
//   - The paper says only that the compute servers adjust the partition
//     boundaries, and the artifact cannot repartition: here the
//     partitions travel through the meta area (Compute nodes in
//     processes), and a compute node outside a move learns it when an
//     operation it forwards is turned away.
//   - A repartitioning stops from's operations on [split, high) rather
//     than [bound, high): the bound is known only once the pages around
//     split are flushed. Keys in [split, bound) wait for the move and stay
//     with from.
//   - Offloading at a missed node requires its parent to be owned, as in
//     the artifact (inner->shared in include/tree/leanstore_tree.h),
//     where the paper names only the node: children of a shared node can
//     be left hot in the cache after another compute node splits that
//     node, and the memory node would read stale copies of them.
//   - Deletes merge a leaf with a cached sibling when both fit in three
//     quarters of a leaf, and an inner node left under a quarter full with
//     a cached sibling the same way, upwards, always under an owned parent
//     (merging is optional; shared parents are not locked for it). The
//     root is never collapsed: it spans every key, so it is shared as soon
//     as two compute nodes own keys, and other compute nodes keep cached
//     copies of it that only the root pointer's change would correct,
//     with no version on the pointer to tell them.
//   - Memory of split-away and merged nodes is never freed, as in Sherman.
//   - M follows the tree's size (subtreelevel=auto, the default): the
//     level whose node count in a bulk load of the run's records is
//     nearest, by ratio, the 45 subtrees M = 3 makes of the paper's 200 M
//     records (its root is at level 4). That is 3 at 200 M, 2 at 10 M and
//     1 M, 1 at 100 K. The constant 3 would make the root of a 1 M-record
//     tree the one subtree, all on memory node 0 (its link saturated, the
//     other three idle); one level below the root leaves 3 subtrees for 4
//     memory nodes at 10 M, and at 100 K two, one of them nearly the whole
//     tree. Offloading, which starts at levels <= M, then starts lower in
//     a scaled tree. subtreelevel=3 keeps the constant.
//   - The offload coefficient c is a parameter, 1.2 as in the artifact
//     (include/cache/latency_collector.h): the paper only says c > 1.
//   - Lazy admission applies from the first miss: the artifact admits
//     every fetched leaf until its cache has handed out every page
//     (cold_to_hot_with_admission), which shortens its warm-up only.
//   - Without the cache (cache=false) each compute node keeps the root's
//     address (8 bytes, re-read when the root no longer covers a key), as
//     a traversal needs somewhere to start; deletes never merge leaves;
//     partitioning=false needs cache=false (section 8.3 adds caching only
//     after partitioning).
//   - With partitioning and no cache, writes to shared nodes take the
//     local latch as well as the RDMA lock, and reads of them validate
//     it: a split by another compute node can narrow a shared node into
//     this node's partition while one of its threads still writes it as
//     shared, and a thread that sees it owned takes the latch alone.
//
// # Local locks
//
// Every local lock of the artifact spins (baotonglu/dex): a page's
// OptLock (include/cache/btree_node.h), the cache-less mode's latches
// (frames' locks without the cache) and the super root's retry a CAS
// with a pause, a cooling-map bucket takes a test-and-test-and-set
// spinlock (include/tree/hash_table.h, util/lock.h). They are
// transport.LockSpin here, so a crowded lock's handoff grows with the
// cores spinning on it. The public code has no single-queue FIFO, the
// baseline of Figures 4 and 9; dmbench gives it the buckets' spinlock.
// Locks for repartitioning, which the public code lacks, are queue locks.
package dex
