// Package indexes defines what a range index on disaggregated memory is to
// dmbench: the Index and Client interfaces every re-implemented index
// satisfies, the registry through which the runner, the CLI and the go-ycsb
// binary find them, and their typed parameters.
//
// An index is a pure client of package transport: it reaches remote memory
// only through the Endpoint it is handed, charges its local work with
// Endpoint.Compute from package cost, and draws randomness only from
// Endpoint.Rand. Each index lives in indexes/<name>/ with a doc.go that
// draws its node layout in bytes, lists the verbs of every operation and
// every deviation from its paper.
package indexes
