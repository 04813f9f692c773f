// Package dolphin is Dolphin (An, Wang, Feng, Liu; MSST'24), a hybrid
// index on disaggregated memory: ART internal nodes, cached on compute
// nodes, over B+-tree leaves that each hold keys of one prefix (all bytes
// but the last) in memory nodes.
package dolphin
