// Package inner is the internal-node layer of the Sherman family of
// B+-trees on disaggregated memory: Sherman (indexes/sherman) and Marlin
// (indexes/marlin). Marlin is Sherman with other leaves, another leaf
// lock and out-of-place updates (Dolphin section II); above the leaves it
// is Sherman unchanged, so that part lives here, once:
//
//   - the header every node of both starts with (front version, level,
//     count, leftmost child, sibling, fence keys) and the internal nodes,
//     sorted [key][child] entries (layout.go);
//   - the compute-side index cache of internal nodes (cache.go), which
//     with the root a compute node believes in is all that its searches
//     change, and which Tree.CopyCache copies to another compute node;
//   - the traversal from the cache or the root down through the internal
//     levels to a leaf, with B-link moves right past nodes split
//     meanwhile, and the listing of a level-1 node's leaves for a scan
//     batch (traverse.go);
//   - the insertion of a split's separator into the parent, splitting
//     internal nodes and growing the root as it goes (smo.go);
//   - the root pointer and the bulk load of the levels above the leaves
//     (root.go, bulk.go). The B-link tree (indexes/blink) and RF-tree
//     (indexes/rftree) use these two too: their root pointer is the same
//     word, and their internal levels are grouped over the leaves the same
//     way, though their node layouts are their own.
//
// What differs stays with the indexes. A client of the layer is a Client
// of the index's Protocol: how it checks a node image it READs (Sherman:
// two-level versions, an optimistic lock or a CRC, by the node's
// partition class in P-Sherman; Marlin: the embedded lock word and the
// node versions), how it locks an internal node and writes it back
// (Sherman: a lock table with local hand-over; Marlin: a CAS lock in the
// node's first word) and how it seals a node for a whole-node WRITE
// (Sherman's crc variant adds a checksum). Leaves, their locks, their
// splits and the scans over them are the indexes' own.
//
// The layer issues its verbs and charges its local work in the order each
// index's design does; each index's golden verb counts pin them.
package inner
