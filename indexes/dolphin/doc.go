// Package dolphin is Dolphin (An, Wang, Feng, Liu; MSST'24), a hybrid
// index on disaggregated memory: ART internal nodes, cached on compute
// nodes without full keys, over B+-tree leaves in memory nodes that each
// hold keys of one prefix (every byte but the last). It follows the
// paper's section III and, where the paper is silent, the facts of the
// public code (hust-anhang/Dolphin) in FACTS-indexes.md section 6.
//
// # Structure (section III.A)
//
// The ART lives in memory nodes; compute nodes cache copies of its
// internal nodes. The root is a Node256 at a fixed address (named in
// memory node 0's meta area). A normal internal node at depth d matches
// key byte d exactly and holds, path-compressed, the key bytes between
// its parent's depth and its own (its partial key). The "special" node at
// depth K-1 (K the key size) picks among its leaves by range: each slot
// names the lowest last byte its leaf owns, up to the next slot's. A leaf
// that has never split hangs straight off a normal node and owns its whole
// prefix; its first split puts a special node in its place (Figure 4(d)),
// later splits add leaves to that special node (Figure 4(e)).
//
// Internal node (8-byte words, little-endian; P = K-1 rounded up to 8):
//
//	[0, 8)         header: depth (bits 0-7), partial length (8-15),
//	               node type 4/16/48/256 (16-17), obsolete (63)
//	[8, 8+P)       partial key
//	[8+P, +8n)     n slots: child offset (bits 0-39), memory node (40-51),
//	               key byte (52-59), child's node type (60-61), kind
//	               empty/leaf/internal (62-63)
//
// Node4, Node16 and Node48 fill their slots in order, Node256 is indexed by
// the byte. For 8-byte keys a Node4 is 48 bytes, a Node256 2,064.
//
// Leaf (K = 8, V = 8: 56 slots, 1,024 bytes, the paper's 1 KB leaves):
//
//	[0, 8)          rev_ptr: slot word of the leaf's special parent (0 before its first split)
//	[8, 16)         front version (byte 8), lo (9), hi (10)
//	[16, 16+P)      prefix: the K-1 bytes the leaf's keys share
//	[24, 472)       56 key words: state (bits 56-63: empty, pending, live,
//	                deleted) and the key's last byte (bits 0-7)
//	[512, 960)      56 values, each at a power-of-two stride up to 64 B so
//	                none straddles a cacheline; a value over 64 B takes
//	                whole cachelines of one version byte and 63 data bytes
//	                (the cacheline versions of section III.A)
//	[960, 968)      rear version
//	[968, 976)      Spear lock word (the leaf's last word; no WRITE covers it)
//
// The leaf holds keys prefix|lo .. prefix|hi. The paper stores min and max
// keys with [min, max) where max = A|255, which leaves out the key A|255; a
// closed range of last bytes does not. Keys precede values so that a READ,
// which lands lines in increasing address order, cannot pair a live key
// word with a value older than it.
//
// # Pathfinding (section III.B)
//
// A traversal follows cached copies from the root. A cached node that
// lacks the key (no child for its byte, a partial key that differs) is
// read again before anything is concluded from it; an internal node found
// obsolete (it was replaced) restarts the traversal from the root with
// every node read fresh. At the leaf: a leaf of another prefix (reached
// through a path-compressed slot) means the key is absent once its parent
// has been read fresh; a leaf of the key's prefix whose range no longer
// holds the key (it split after the cache was filled) sends the client to
// the special node its rev_ptr names, read fresh, and on to the right leaf
// (backtracking), without going back to the root.
//
// # Verbs per operation (8-byte keys and values, warm cache)
//
//	search  1 round trip: READ of the whole leaf (1 KB)
//	update  2 round trips: FAA +1 on Spear and READ of the leaf's header and
//	        key words (512 B, not the values: section III.A) in one batch;
//	        WRITE of the value and FAA -1 in one batch. 2 FAA, 1 READ, 1 WRITE.
//	insert  3 round trips into a leaf of the key's prefix: FAA +1 and READ;
//	        CAS of the first empty key word from empty to pending (on
//	        failure the next word); WRITE of the value, WRITE of the key
//	        word live and FAA -1 in one batch. 2 FAA, 1 READ, 1 CAS, 2 WRITE.
//	        A present key is updated in place (2 round trips). A new prefix:
//	        WRITE of a new leaf, then CAS of the parent's empty slot with a
//	        READ of the parent's header in one batch (plus, where the key
//	        parts from a compressed path, a new Node4: Figure 4(b)).
//	delete  2 round trips: FAA +1 and READ; CAS of the key word from live
//	        to deleted and FAA -1 in one batch. 2 FAA, 1 READ, 1 CAS.
//	scan    one READ of the special node that holds the start key (the
//	        cached path above it is trusted only for the start key's own
//	        subtree) with the first leaves in one batch; further leaves in
//	        batches; every internal node the scan moves sideways in is
//	        read fresh.
//
// Every miss, retry and SMO adds verbs beyond these; verbs_test.go checks
// the counts above.
//
// # Concurrency (section III.C)
//
// Update-update conflicts are settled by the memory node's RNIC: a value
// of up to 64 bytes is written by one WRITE within one cacheline, so
// concurrent updates land whole and the last one wins (MS-RNIC write
// synchronisation). Insert-insert conflicts are settled by the CAS on the
// key word. Spear, Marlin's ternary-state lock, is changed only by FAA:
// every insert, update and delete holds +1 while it works on the leaf; an
// SMO adds -1,000,000, polls the word with READs until it is exactly
// -1,000,000 (the holders drained), rewrites the leaf with one WRITE that
// stops short of the Spear word, and adds 1,000,000 back. An operation that
// finds an SMO running (word below -100,000) undoes its +1 and polls with
// READs. A search takes no lock: it checks Spear and the leaf's front and
// rear versions in its READ and reads again if an SMO ran.
//
// SMOs (section III.B): a leaf with no empty key word is compacted in place
// when at most half its slots hold live keys, else split: the upper half
// of its live keys moves to a new leaf, which is linked into the special
// parent (or, at the leaf's first split, into a new special Node4 that
// replaces the leaf in its parent by CAS) before the old leaf is rewritten
// with the lower half; both leaves' rev_ptr name the special node. ART
// nodes grow (4, 16, 48, 256) and split by partial key as in ART: the old
// node's header is CASed obsolete (the one winner replaces it), its slots
// read, the new node written and CASed into the parent. Every slot CAS is
// batched with a READ of the node's header; a node found obsolete means
// the change may be missing from its copy and is made again on the node
// that replaced it. The ART is updated synchronously, as the paper says:
// the SMO's CAS makes the change visible to every compute node at once.
// Other compute nodes' caches learn of it lazily, as SMART's do: a cached
// copy is replaced when a traversal reads the node again (a missing child,
// a leaf outside its range, an obsolete node).
//
// # Local lock table (combine, default on)
//
// Dolphin's code keeps SMART's local lock table on: its insert (which
// serves updates too) starts by taking the key's local write lock and
// returns early on a handover. With combine=true (package combine) the
// clients of one compute node that search, or write, one key at the same
// time share one remote operation: a write round's winner carries the last
// value dropped into the key's buffer and closes the round at the verb
// that decides its result (the locked leaf READ, and for a key that was
// absent the WRITE or new leaf that makes it visible); a search winner
// closes its round before each leaf READ. Inserts and updates combine
// apart; deletes are not combined. The paper's text does not mention the
// table.
//
// # Cache (Env.CacheBytes)
//
// Per compute node, shared by its clients: copies of internal nodes keyed
// by address, charged at their remote size. Over budget, the less used of
// two random entries is evicted (Sherman's evict_one policy; SMART's
// RadixCache, which Dolphin reuses, also evicts at random). A budget of 0
// caches nothing: every operation reads the path from the root. Info
// reports the bytes cached and, as MemoryBytes, every byte allocated on
// memory nodes (nodes left behind by replacements included). Local work is
// charged from the cost table: one cache lookup (cost.CacheLookup) and a
// node search per cached node a traversal passes, linear scans of leaf key
// words, copies of leaf images.
//
// # Memory modes
//
// Spec.PaperMode is declared: a search trusts a value read while an
// update WRITEs it, and a leaf's versions to expose a READ torn by an SMO's
// rewrite, both of which need 64-byte cacheline atomicity and WRITEs that
// land in increasing address order. Strict mode (8-byte atomicity, the
// words of a WRITE landing in any order) runs the same code: a value of
// more than 8 bytes can then be read half old, half new, and a READ that
// overlaps a leaf's rewrite can see old and new words between matching
// front and rear versions (the Spear word guards only READs that end
// before the rewrite does). The conformance suite therefore logs strict-
// mode violations instead of failing them; in its runs (8- and 16-byte
// values) none has shown up so far. Every word the algorithm CASes, FAAs
// or branches on (slot words, headers, key words, Spear) is one aligned
// 8-byte word, so strict mode cannot crash or wedge it.
//
// # Deviations from the paper
//
//   - Deletes: the public code has none. Following the paper's text
//     (section III.B: the key word is cleared, section III.C: a delete
//     synchronises with updates through the key word), a delete changes the
//     key word by CAS, to a tombstone rather than to empty: an emptied slot
//     could be claimed by a re-insert of the same key while a stale update
//     still writes its value there, and two inserts of one key could claim
//     two slots. Tombstones are dropped at the leaf's next SMO (compaction).
//     Leaves are never merged and freed (the paper names merges for empty
//     leaves but describes none).
//   - Key words hold the key's last byte and a state, not the whole key:
//     the leaf's prefix supplies the rest, so keys of any size work (the
//     conformance suite uses 24-byte keys) and key 0 is storable.
//   - An insert claims the key word as pending and makes it live in the
//     same batch that WRITEs the value, so no reader sees the key before
//     its value; the public code CASes the key itself and writes the value
//     after, which a concurrent search could see half-done. The round trips
//     stay the paper's three.
//   - A delete is a CAS, not a WRITE, so that of two racing deletes one
//     fails (linearizability).
//   - Special nodes grow like other ART nodes; the public code caps them at
//     16 leaves.
//   - Values over 64 bytes: an update reads the whole leaf to learn the
//     value's cacheline version and writes version+1; two racing updates
//     may write the same version, so a torn read between them can pass the
//     check (cacheline versions assume one writer at a time).
//   - BulkLoad inserts through the ordinary path on a setup endpoint
//     (Dolphin has no bulk builder; the paper warms its tree by inserts).
//   - The cache is keyed by node address and a traversal starts at the
//     root; the public code's cache is SMART's RadixCache (src/
//     RadixCache.cpp), keyed by key prefix, whose lookup starts at the
//     deepest cached node. A cached parent still pointing at a leaf that
//     another compute node split sends a client through the old leaf and
//     the backtrack until a traversal reads the parent again, where a
//     radix cache would start from the special node the backtrack cached.
//     A prefix-keyed start measured the same on Dolphin's LOAD (1.22 READs
//     per insert either way, 256 MiB cache), so it is not built.
//   - Scans read the special node fresh and trust the cached path only for
//     the start key's own subtree, so a scan never misses a leaf another
//     compute node added; the paper groups the READs of all nodes in range
//     by memory node, and the public code's scan records only the first
//     entry of each leaf.
package dolphin
