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
// (subtreelevel, 3) live on one memory node; leaves never cross a partition
// boundary (bulk load and the empty tree break leaves at the bounds).
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
//   - The partition table is one Go value shared by all compute nodes
//     (routing configuration, not index data).
//   - Offloading at a missed node also requires its parent to be owned:
//     children of a shared node can be left hot in the cache after another
//     compute node splits that node, and the memory node would read stale
//     copies of them.
//   - Deletes merge a leaf into a cached sibling under an owned level-1
//     parent only; inner nodes are never merged.
//   - Memory of split-away and merged nodes is never freed, as in Sherman.
//   - The offload coefficient c is a parameter (1.2): the paper only says
//     c > 1.
//   - Repartitioning (section 4) is not implemented.
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
package dex
