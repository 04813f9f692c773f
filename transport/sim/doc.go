// Package sim is dmbench's deterministic virtual-time fabric: it runs a
// whole RDMA cluster (by default 6 compute nodes, 1 memory node, 100 Gb/s)
// on one core of one machine, so the papers' experiments can be reproduced
// without RDMA hardware.
//
// # Scheduling
//
// Every client is a coroutine (iter.Pull). Exactly one runs at a time: it
// runs until it issues a verb, computes, parks on a Mutex or finishes. An
// event queue ordered by virtual time (a radix heap, see heap.go) decides
// what runs next. Nothing depends on the wall clock, map order or unseeded
// randomness, so the same config and seed give bit-identical runs; every
// processed event is folded into EventHash so tests can assert it.
// Each verb costs its client two coroutine switches (it suspends, and is
// resumed when the verb completes); with thousands of clients their stacks
// are cold by then, so the switches bound the simulator's verb rate
// (BenchmarkCoroutineSwitch measures them). A verb's target memory is
// prefetched when it is posted, since it is read only on arrival.
//
// # NIC model
//
// Each node's NIC is three FIFO servers (timelines that know their booked
// future, so a booking ahead does not hold up earlier work): message
// processing (one message per verb at the requester and one at the
// responder, 1/MsgRate each: the memory-side IOPS ceiling the papers talk
// about) and the two directions of its link (LineRate, with each message's
// wire headers counted). Atomics also queue on a per-address unit
// (AtomicRateHost or AtomicRateDevice) and a per-NIC unit (AtomicRateNode).
// Each QP allows MaxOutstanding READ/atomic verbs in flight; later ops on
// the QP wait in posting order. Fixed stage latencies (see Profile) make an
// unloaded small READ take the measured ~2 us. The requester's core pays
// PostNs once per doorbell: a Post of many ops costs one post. nic.go
// walks through a verb stage by stage.
//
// # CPU model
//
// Clients on one thread share its core: Compute and posting occupy it, so a
// thread's coroutines queue for it. Each node has Config.Cores RPC cores;
// each is a coroutine serving the node's request queue in arrival order,
// paying RecvNs per request plus the handler's own Compute, so an
// overloaded memory node queues requests (DEX offloading, dLSM compaction,
// chunk allocation all land here).
//
// # Memory semantics
//
// A READ's or WRITE's memory effect is applied when it arrives at the
// responder, an atomic's when its turn comes in the per-address unit, in
// event order, so races, retries and stale reads happen as on hardware. A
// word crowded with atomics (CAS spinning on a lock) therefore delays the
// effect of each, not only its reply: the next CAS after an unlock takes
// the lock and learns it at once, as the real unit does. A responder
// executes one QP's requests in order, so an op behind an atomic of its
// QP that is still queued waits for it (head-of-line blocking of the
// coroutines sharing a thread's QP).
// transport.ModePaper makes 64-byte cachelines atomic and lands a
// multi-line WRITE lower lines first; transport.ModeStrict makes only 8-byte
// words atomic and lands a multi-word WRITE in a random order. Either way a
// READ that arrives while a WRITE is landing can see it torn (memory.go).
// A verb to the caller's own node is a local memory access: applied at
// once and charged to the caller's core, no NIC involved, not counted as a
// verb.
//
// # Approximations
//
// Responder-side resources are reserved in arrival order, requester-side
// ones in issue order; a response's return trip is booked when the
// request arrives. Congestion control, PFC pauses, PCIe limits
// other than the atomic ceiling, NIC caches (QP/MTT thrashing) and packet
// loss are not modelled. Time is kept in picoseconds internally.
package sim
