// Package local is the in-process, real-time fabric: every node of the
// cluster lives in this process, every client is a goroutine, and clients
// run truly in parallel. It runs the same index code as the simulator, so it
// is the target of the race detector and the default fabric of the go-ycsb
// binary on one machine.
//
// # Memory semantics
//
// Each region is a slice of 64-bit words in anonymous memory mapped from
// the OS (on Linux; a plain make elsewhere), so a region of several GiB
// costs nothing until touched and Close returns it at once. Every access
// goes through sync/atomic on whole words; the bytes of a READ or WRITE that
// cover only part of a word at an unaligned edge are read from one atomic
// load or merged into the word with a compare-and-swap loop. READ and WRITE
// racing with each other or with the atomics are therefore well defined and
// clean under the race detector, which keeps watching what matters to index
// code: the Go buffers that verbs copy from and into.
//
// transport.ModePaper adds 64-byte cacheline atomicity: every access takes
// the lock of each cacheline it touches, one line at a time in increasing
// address order (never two at once, so no lock order can deadlock), shared
// for a READ and exclusive for a WRITE or an atomic. The locks are a fixed
// table of stripes indexed by a hash of the line. transport.ModeStrict takes
// no locks: only aligned 8-byte words are atomic, and a reader may see a
// WRITE half applied.
//
// Verbs check their address against the node's transport.Layout, as every
// fabric does, and return its *transport.AddrError. Post checks every op of
// the batch before executing any, so a batch with a bad op has no effect;
// then it runs the ops in order.
//
// # RPC
//
// Call runs the handler in the caller's goroutine once it holds one of the
// serving node's RPC cores (Config.Cores): a node with two cores runs at most
// two handlers at once and further callers wait. The handler gets a copy of
// the request and the caller a copy of the reply, as a message would carry.
//
// # What it does not model
//
// There is no NIC, wire or CPU model: Compute is a no-op, Now is wall-clock
// time since the fabric was built, and throughput is whatever the host
// delivers. Verbs complete synchronously, so Post gains nothing over single
// verbs, and there is no bound on outstanding READs per QP. Busy times in
// Stats stay zero and byte counts are payload only, without headers.
//
// # Statistics
//
// Each endpoint counts its own verbs, so the hot path shares no counters.
// Stats merges them and ResetStats zeroes them; both must be called between
// runs, never while Run is in progress. Verbs issued through Setup endpoints
// are not counted, nor are a handler's accesses to the memory of the node it
// serves (they are local memory accesses, not verbs).
package local
