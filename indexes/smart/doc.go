// Package smart is SMART (Luo et al., OSDI'23), the adaptive radix tree
// for disaggregated memory, and P-SMART, its partitioned variant in DEX
// (VLDB'24) section 8. The full layout and verb sequences follow in this
// file once the golden tests fix them.
package smart
