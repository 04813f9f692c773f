// Package dlsm is dLSM (Wang et al., ICDE'23): an LSM tree for
// disaggregated memory.
package dlsm
