// Package transport is the verbs API every index in dmbench is written
// against, and nothing else: no fabric lives here.
//
// A cluster is a set of nodes, each a compute node or a memory node, each
// exposing registered regions of memory. Clients reach remote memory only
// through an Endpoint, which offers the one-sided verbs of RDMA (READ,
// WRITE, CAS, masked CAS, FAA), doorbell-batched posting, two-sided RPC to
// handlers registered on a node, and a way to charge local CPU work. The
// fabrics under transport/ (sim, local, and later tcp and verbs) implement
// Fabric and Endpoint; an index never knows which one it runs on.
//
// Addresses are GAddr values: a 16-bit node id above a 48-bit byte offset
// into that node's address space. Regions start at RegionAlign, so the zero
// GAddr is never a valid address and serves as nil.
//
// Memory holds 64-bit words in little-endian byte order, as on the x86 hosts
// of every paper reproduced here; the atomics (CAS, masked CAS, FAA) operate
// on such aligned words.
//
// Shared blocking primitives (Mutex, RWMutex) take the caller's Endpoint so
// that a waiter parks in virtual time on the simulator and blocks for real on
// the real fabrics. The chunk Allocator hands out memory-node chunks by RPC
// and sub-allocates them locally, as Sherman does.
package transport
