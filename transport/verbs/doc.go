// Package verbs is where dmbench meets real RDMA NICs: device discovery
// (Devices, with Mellanox/rdmamap, shown by `dmbench list fabrics`), a
// reader of the ports' hardware counters (ReadPortCounters, whose sysfs
// root is a parameter so tests read a fake tree), and the "verbs" fabric:
// libibverbs through a thin cgo layer of its own (ibv.h, ibv.c, ibv.go)
// behind the build tag `linux && cgo && rdma`. Without the tag New
// returns an error saying how to rebuild; nothing else needs cgo.
//
// # What runs where
//
// The fabric keeps the tcp fabric's shape and reuses it as its control
// plane: memory nodes are `dmbench memnode` processes (tcp.Server), compute
// nodes live in the run's process, and node ids, region layouts, the
// cluster key, RPCs (the chunk allocator, DEX and dLSM offloading),
// Setup's bulk loading and the verbs to compute nodes' regions all travel
// over tcp. Only the one-sided verbs from clients to memory nodes go over
// RDMA: each client endpoint has a completion queue, a registered staging
// buffer (huge pages when reserved, else plain) and one RC QP to every
// memory node, connected at Run by the MethodConnect RPC, whose
// ConnectRequest and ConnectReply carry LID, GID, QP number and PSN one
// way and the same plus every region's address and rkey the other. A
// memory node answers it with a Responder, which registers the node's
// regions with its device and moves a QP of its own through INIT, RTR and
// RTS facing the client's.
//
// # Verbs
//
// READ, WRITE, CAS and FAA are RDMA READ, RDMA WRITE, ATOMIC_CMP_AND_SWP
// and ATOMIC_FETCH_AND_ADD on aligned 8-byte words. A doorbell batch
// (Endpoint.Post) links its ops to each memory node into one work-request
// list, only the last signalled, posted with one ibv_post_send per QP;
// completions are polled 16 at a time. A batch larger than the staging
// buffer (256 KiB) or a send queue (32 requests) goes in rounds, one after
// another, so each node still sees its ops in order. A failed completion
// names the device, QP, memory node and status, and leaves the endpoint
// broken: later verbs return the same error.
//
// # Masked CAS
//
// Upstream rdma-core has masked atomics only as mlx5 direct-verbs WQEs
// (the masked compare-and-swap opcode of ConnectX), and Sherman's and
// SMART's ibv_exp_* calls are gone with the old MLNX_OFED. This fabric
// does not build raw WQEs, so every device runs masked CAS as "read+cas"
// (recorded in the result's profile): a masked CAS to a memory node
// READs the word, merges the swap bits into it when the compare bits
// agree, and CASes the whole word, retrying with the word a failed CAS
// returns (maskedcas.go). Its verbs count as what they are: one READ and
// one CAS, one more CAS per interfering change, no CAS when the compare
// bits differ; masked_cas stays zero. Fabric.Profile names the device,
// port and method ("mlx5_0 port 1, masked CAS read+cas") for the result.
//
// # Statistics
//
// Endpoints count the QPs' verbs exactly as the tcp fabric counts its
// own (per tag and target node, payload bytes, one doorbell per single
// verb and per Post), and Stats adds the control plane's counters (RPCs,
// verbs to compute nodes). Busy times stay zero. ReadPortCounters reads
// what the NIC saw, converting port_xmit_data and port_rcv_data from the
// 4-byte words sysfs counts them in to bytes.
//
// # Compiled, not run
//
// The project's machines have no RDMA device and no kernel support for
// one (ibv_get_device_list fails with ENOSYS or lists nothing), so the
// rdma build is compiled and vetted (make verbs-check) and its device-free
// tests run: opening the fabric there returns ErrNoDevice, which names the
// sim and tcp fabrics. TestLoopbackVerbs, which connects a QP to a
// Responder on the same device and runs every verb, skips with that
// reason. Nothing of the data plane has run on hardware yet.
//
// # Deviations and what is missing
//
//   - A memory node serves RDMA when started with dmbench memnode --verbs:
//     its server hands every layout and region to a Responder
//     (tcp.ServerConfig.OnMemory), which registers them with the device and
//     answers MethodConnect. Memory nodes started inside the run's process
//     have no Responder: the fabric needs memnode processes.
//   - Region memory is mapped by the tcp server with plain pages; huge
//     pages for regions would need that allocation to try MAP_HUGETLB.
//   - Verbs to compute nodes' regions (DMTree's fingerprint tables) and
//     verbs issued by RPC handlers travel over tcp, not RDMA.
//   - One RC QP per client endpoint per memory node; the artifacts share
//     QPs per thread. Regions added after a client connected are unknown
//     to it: add regions before Run.
//   - RDMA atomics are atomic against each other, not against the memory
//     node's CPU (IBV_ATOMIC_HCA): an RPC handler on the memory node that
//     touches words clients CAS (the chunk allocator does not) would race.
//     ModePaper's 64-byte cacheline atomicity is whatever the NIC and PCIe
//     give; dmbench cannot enforce it on this fabric.
package verbs
