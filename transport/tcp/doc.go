// Package tcp is the fabric of real processes and hosts: every node's
// registered regions live in a Server, and clients reach them over TCP.
// The serving process executes the one-sided verbs (READ, WRITE, CAS,
// masked CAS, FAA) on its memory: an emulation of RDMA, in which the
// responder's CPU does what a NIC would, so results on this fabric say
// "tcp" and carry no NIC model.
//
// # Shape
//
// Memory nodes run their servers in this process on loopback (New with no
// Options.MemNodes: how the tests run) or in dmbench memnode processes,
// on this host or others (Options.MemNodes with the cluster key). Compute
// nodes run in this process, each with a server of its own for the
// regions compute nodes expose (DMTree's fingerprint tables and locks)
// and for RPCs to them; or, with Options.Compute, only the listed ones
// run here (dmbench computenode) and the others' servers are reached at
// the addresses Options.Peers exchanges (a rendezvous). A region another
// process added to a compute node is found by asking that node's server
// for its layout again. The clients of this process share Options.Conns
// connections (default one) to each node's server; a verb to the client's
// own node, when that node's server runs in this process, is a local
// memory access, as on every fabric.
//
// # Wire
//
// A frame is a 4-byte length, a type, an 8-byte request id and a payload
// (frame.go). Replies carry their request's id, so many verbs are in
// flight on one connection, each client waiting for its own; a writer
// goroutine per connection coalesces every frame appended since its last
// write into one write syscall; a doorbell batch (Endpoint.Post) is one
// frame per target node, sent together. A connection starts with a key
// challenge: the server sends a nonce and the client answers with an
// HMAC-SHA256 of it under the cluster key, so the key never crosses the
// wire; then the hello names the node and, for a memory node started on
// its own, the layout to hold (fresh, zeroed memory unless Options.Keep).
// A connection's unsent frames are bounded: a peer that stops reading
// replies stalls its own requests, not its server's memory. A lost
// connection fails every request on it with an error naming the node and
// its address.
//
// # Checks
//
// Clients check every access against the node's layout before sending, so
// a bad address costs no traffic and a batch with a bad op has no effect,
// with the same *transport.AddrError the other fabrics return. Servers
// check everything again, as they must not trust a peer: a frame that does
// not decode, an access outside the node's regions or past a region's end,
// a misaligned atomic, an unknown method, a second hello, or a wrong key
// is answered with an error frame naming the address, region, method or
// size at fault, and no memory outside a region is ever touched. Only a
// frame that cannot be delimited (longer than MaxFrame) or a failed hello
// ends a connection. The decoders are fuzzed: go test -fuzz=FuzzDecode.
//
// # Memory and RPC
//
// A server's memory has the local fabric's semantics word for word:
// aligned 8-byte words through sync/atomic, so atomics are atomic at the
// server, and 64-byte cachelines atomic in transport.ModePaper. An RPC
// runs its handler in the server's process on one of the node's cores
// (Config.Cores, or dmbench memnode --cores), at most that many at once,
// on an endpoint of the serving node. Handlers are Go code: a memory node
// in a process of its own serves the chunk allocator, and the handlers an
// index's builder installs there (Fabric.Install: the server makes them
// from the index's name, shape and parameters, ServerConfig.Install);
// Handle on such a node for a method nothing installed makes Run fail
// naming the method.
//
// # Statistics
//
// Endpoints count exactly as on the local fabric: per tag and per target
// node, payload bytes only, one doorbell per single verb and per Post,
// nothing for rejected verbs, Setup endpoints or accesses to a node's own
// memory; so the same run gives the same verbs per operation on local, sim
// and tcp. Per-node Msgs and bytes are derived from them, without frame
// headers. Busy times stay zero. Stats and ResetStats are for between
// runs.
package tcp
