// Package marlin is Marlin (An et al., ICPP'23), a concurrent and
// write-optimized B+-tree on disaggregated memory.
package marlin
