// Package marlin is Marlin (An, Wang, Feng, Zou, Liu, Zhang; ICPP'23), a
// concurrent and write-optimized B+-tree on disaggregated memory, as the
// Dolphin paper (MSST'24, sections II and IV) describes and measures it
// and as the public reproduction on Sherman's code (River861/Marlin,
// TREE_ENABLE_MARLIN) builds it. Dolphin ran code from Marlin's authors,
// which is not public.
//
// Marlin is Sherman with three changes (Dolphin section II): leaves hold
// pointers to separately stored data items instead of values; an update
// writes a new item out of place and swings the leaf slot's pointer with
// one CAS, as RACE hashing does; and a ternary-state leaf lock, Spear,
// changed only by FAA, lets inserts, updates and deletes (IDUs) of one
// leaf run together while excluding structure modifications (SMOs). The
// rest is Sherman's: 1 KB-class nodes with fence keys and sibling
// pointers, compute-side caching of internal nodes, splits that write the
// new sibling before the shrunk node and then insert the separator into
// the parent under the parent's CAS lock. That part is shared with
// package sherman as package indexes/internal/inner (the node header,
// internal nodes, the index cache, traversal, separator insertion and
// bulk loading of internal levels); this package gives it Marlin's node
// check and internal-node lock (leaf.go, split.go).
//
// # Layout (K-byte keys, V-byte values, span S = 64)
//
// Every node starts with the same header; H = 28 + 2K rounded up to 8.
//
//	offset  bytes  field
//	0       8      lock word: a leaf's Spear (signed count), an internal
//	               node's CAS lock (holder tag, 0 = free)
//	8       1      front version
//	9       1      level: bits 0-6 (0 = leaf); bit 7 set: high fence is +inf
//	10      2      count: keys of an internal node (0 in a leaf)
//	12      8      leftmost: an internal node's child below key 0
//	20      8      sibling: right neighbour at the same level (0 = none)
//	28      K      low fence, inclusive
//	28+K    K      high fence, exclusive
//	H       ...    S entries
//	last    1      rear version
//
//	leaf slot, 8 + K (K rounded up to 8) at H + i*(8+K):
//	  0      8     item pointer: 0 free, 1 tombstone (the key was
//	               deleted), an item's address, or an item's address | 2
//	               while its insert is pending (its key not yet written)
//	  8      K     key
//	internal entry, K + 8 at H + i*(K+8): key (sorted), child for keys >=
//	data item, 8 + K + V rounded up to 8, 8-aligned:
//	  0      8     size word: K | V << 16
//	  8      K     key
//	  8+K    V     value
//
// With 8-byte keys and values: H = 48, a leaf and an internal node are
// 48 + 64 x 16 + 1 = 1073 bytes, an item 24 bytes (the artifact: 1074-
// and 1076-byte pages of 64 entries, 24-byte data blocks). With 24-byte
// keys and 16-byte values (the conformance suite's second shape): H = 80,
// nodes of 2129 bytes, items of 48. Every item written stays allocated
// (Marlin frees none), so memory grows with every update: Dolphin's Table
// II measures Marlin at about twice Sherman's memory. Info.MemoryBytes
// counts nodes and items.
//
// Root pointer: memory node 0's main region + 0, the root's address with
// its level in the low 6 bits (nodes are 64-byte aligned).
//
// # Spear (spear.go)
//
// The leaf's lock word holds the number of IDUs in it minus smoX = 2^40
// for an SMO. An IDU adds 1 in the doorbell batch that READs the leaf; a
// negative old value means an SMO has the leaf, so it takes the 1 back
// and polls the word with 8-byte READs until it is not negative. An IDU
// whose insert must split converts its share by adding -(smoX+1) in a
// batch with a fresh READ of the leaf; if the old value was negative
// another SMO won, so it adds smoX back (giving up its share too), waits
// for that SMO and starts over; otherwise it polls the leaf until the
// word is exactly -smoX (every other IDU gone) and rebuilds the leaf from
// that image. The SMO ends by adding smoX in the batch that WRITEs the
// leaf. Searches and scans take no lock; they reject a leaf image whose
// Spear is negative (an SMO may be writing it) or whose versions differ.
//
// # Verbs per operation (warm cache; TestVerbsPerOperation checks them)
//
// R = READ, W = WRITE, C = CAS, F = FAA; [ ] is one doorbell batch.
//
//	search           R leaf, R item                         2 RTT, 2 verbs
//	search (absent)  R leaf                                 1 RTT
//	update, insert   [F +1, R leaf], W item, C slot, F -1   4 RTT, 5 verbs
//	  of a present key (or of a deleted key: C revives its tombstone)
//	insert (new key) [F +1, R leaf], W item, C slot free ->  4 RTT, 7 verbs
//	                 pending, [W key, W pointer, F -1]
//	delete           [F +1, R leaf], C slot -> tombstone,   3 RTT, 4 verbs
//	                 F -1
//	update/delete    [F +1, R leaf], F -1                   2 RTT, 3 verbs
//	  of an absent key (indexes.ErrNotFound)
//	insert + leaf    [F +1, R leaf], W item, [F -(smoX+1),  R 3, W 5, C 1,
//	  split (parent  R leaf], W new leaf, [W leaf, F +smoX],  F 3
//	  has room)      C parent lock, R parent,
//	                 [W parent, W unlock]
//	scan (100 keys)  [R x leaves], then [R x 100 items]     2 batches, 104 verbs
//	                                                        (4 leaves)
//
// A CAS that loses to another IDU's CAS is repeated with the value it
// returned (Marlin's retry); one that finds a tombstone makes an update or
// delete return indexes.ErrNotFound. A scan READs as many leaves of the
// cached level-1 node as the count needs at 69% fill, plus one, at most 32
// (kParaFetch), then one READ per item in one doorbell batch (Dolphin
// section IV-D: "at least 100 RDMA_READs" for 100 items). A cache miss
// adds one READ per uncached internal level and an 8-byte READ of the
// root pointer when this compute node does not know the root.
//
// Local work charged (package cost): a cache lookup per level looked up,
// a binary search per internal node, a linear scan of a leaf's slots, a
// sort of a leaf's entries on splits and scans, a copy per node cached.
//
// # Memory modes
//
// Marlin declares no reliance on paper memory mode: it passes the
// conformance suite in strict mode on both fabrics. A leaf or internal
// node image is accepted only if its own lock word shows no SMO or
// internal-node writer and its versions agree: on the simulator a READ
// takes its bytes at one instant and a holder's WRITE lands before the
// release that follows it on the same QP, so an unlocked image is whole;
// on the local fabric READs and WRITEs copy words in increasing address
// order, and the front/rear versions catch the overlap. A slot's key is
// trusted only once its pointer is final, and the final pointer is
// written after the key on the same QP; the pointer precedes the key in
// the slot, so an address-ordered READ that sees it also sees the key.
// Pointers change only by 8-byte CAS or WRITE.
//
// # Hot leaves
//
// Every IDU of a leaf makes two FAAs on its Spear, a word in host memory
// (about 2 M atomics a second per address), and an IDU that meets an SMO
// two more. Where all clients write one leaf, as ordered inserts do at
// the right end of the tree (Dolphin's LOAD and range-write workloads),
// these atomics queue behind each other and each split of the hot leaf
// (every span/2 inserts) waits for them: Marlin loads far slower than
// Sherman, whose locks are on-chip and handed over locally.
//
// # Deviations from the paper and the artifact, and why
//
//   - Inserts. The artifact CASes the pointer of an empty slot and retries
//     with the returned value on failure, overwriting another insert's
//     item (two concurrent inserts into one leaf lose one key), and two
//     inserts of one key can take two slots. Here a slot is claimed by
//     CAS from free to the item's address marked pending; the key and the
//     final pointer follow in the release batch. An insert CASes the
//     first free slot at or after its key's home slot (an FNV hash of the
//     key, wrapping), so inserts of different keys into one leaf seldom
//     race and inserts of one key meet; it learns the key of every
//     pending slot it sees by READing its item (the item holds its key;
//     these READs, one batch, are the verbs the artifact has no
//     counterpart for, issued only when a pending slot is seen), and an
//     insert that finds its own key pending waits for it and then
//     replaces its pointer, so a key is in one slot. A lost CAS re-READs
//     the leaf.
//     The release batch has one more WRITE (the pointer) than the
//     artifact's [W key, F -1]; the round trips are the same.
//   - The slot is [pointer][key] (the artifact: [key][value pointer]) so
//     that address-ordered READs see a final pointer after its key.
//   - The Spear follows the artifact's HEAD (River861/Marlin: embedded
//     lock word, ON_CHIP off, no local hand-over) with three changes. An
//     IDU takes its share with [FAA +1, READ leaf], the FAA first, so the
//     image is read under the share (the artifact posts the READ first,
//     so an SMO could write the leaf between its READ and its FAA). An
//     SMO takes the leaf with [FAA -(smoX+1), READ leaf] and, when IDUs
//     were still in, polls the whole leaf until they have left and
//     rebuilds from that image; the artifact polls the lock word and
//     rebuilds from the image it read before the IDUs left, losing their
//     slot changes. An SMO that loses to another gives its share back,
//     waits for the word to be non-negative and looks the key up again
//     (the artifact re-enters at once). The SMO's WRITE of the leaf starts
//     after the lock word, as in the artifact's HEAD (Dolphin section III
//     says Marlin's covered the Spear; an older artifact version did).
//   - Deletes: the artifact's delete is Sherman's old path, marked as
//     needing a rewrite. Here a delete CASes the slot's pointer to a
//     tombstone under the shared Spear; the slot keeps its key, so a
//     re-insert revives it. Tombstones are reclaimed when the leaf is next
//     rebuilt: an insert into a leaf with one free slot or none rebuilds
//     it, compacting it in place when the live entries and the new one
//     fill at most half of it, else splitting it at the middle. Leaves
//     never merge (Sherman has no merge either).
//   - Searches and scans check the leaf's Spear and versions (above); the
//     artifact's Marlin build drops Sherman's entry versions and checks
//     only the node versions, which in strict mode would pass a torn leaf.
//   - No local lock tables: the artifact's default (embedded-lock) build
//     turns off Sherman's local locks and hand-over, and Marlin's leaf
//     writers do not lock exclusively. Internal nodes keep Sherman's CAS
//     lock, embedded in the node's first word like the artifact's build,
//     and their readers likewise reject a locked image.
//   - The index cache holds internal nodes of every level within
//     Env.CacheBytes per compute node (the artifact caches the level-1
//     nodes, 600 MB by default); a warm search makes the one level-1
//     lookup either way. New roots are learned lazily by re-reading the
//     root pointer, not broadcast by RPC. Both as in package sherman, as
//     is copying them from one compute node to another (CopyCaches).
//   - Scans take a count, not a key range, and read only the items of the
//     entries they return; the artifact's FIXME of a point search for
//     every integer key missing from [from, to) is left out.
//   - BulkLoad writes leaves bulk_fill (75%) full, outside simulated
//     time, each leaf's items spread over the memory nodes in turn (one
//     block per node per leaf), as items allocated by writes over time
//     are. Marlin has none.
package marlin
