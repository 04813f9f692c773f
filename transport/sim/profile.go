package sim

import (
	"fmt"
	"sort"
	"strings"
)

// Profile is a hardware model: NIC rates, wire format, and the latencies of
// each stage of a verb. Profiles are global: a figure picks the profile of
// its paper's testbed, never a per-index setting.
//
// The rates and the round-trip total are measured figures (sources beside
// each value). How the round trip splits among the stages is a modelling
// assumption, chosen so that an unloaded small READ takes the measured time.
type Profile struct {
	Name string
	Desc string

	// LineRate is the link rate in bytes per second, per direction.
	LineRate float64
	// MsgRate is the NIC's message-processing rate per second. Every verb
	// costs one message at the requester's NIC and one at the responder's.
	MsgRate float64
	// AtomicRateHost and AtomicRateDevice are the rates of atomics to one
	// 8-byte address in host memory and in on-chip device memory.
	AtomicRateHost   float64
	AtomicRateDevice float64
	// AtomicRateNode caps atomics per second over all addresses of one NIC
	// (PCIe read-modify-write serialisation); 0 means no cap.
	AtomicRateNode float64
	// MaxOutstanding bounds READ/atomic verbs in flight per QP.
	MaxOutstanding int

	// Wire format: MTU payload bytes per packet, per-packet base header
	// (link, network and transport headers, CRCs, and on Ethernet the
	// preamble and inter-frame gap), and the extended transport headers.
	MTU          int
	BaseHeader   int
	RETH         int // READ/WRITE request
	AETH         int // acknowledgement, READ response
	AtomicETH    int // atomic request
	AtomicAckETH int // atomic response

	// Stage latencies (ns).
	PostNs    float64 // requester CPU per doorbell: WQE build, MMIO, CQ poll
	NICTxNs   float64 // requester NIC: WQE fetch, payload DMA
	WireNs    float64 // one way: cable and one switch hop
	NICRxNs   float64 // responder NIC pipeline
	MemReadNs float64 // responder PCIe read of host memory (READ, atomics)
	NICCompNs float64 // requester NIC: response DMA and CQE write
	// RecvNs is the CPU cost for a core to take one two-sided message:
	// an RPC server core a request, a requester its reply (poll the
	// receive queue, dispatch, repost the buffer).
	RecvNs float64
	// LocalAccessNs and LocalBytesPerNs cost a verb on the caller's own
	// node: a memory access plus a copy, no NIC.
	LocalAccessNs   float64
	LocalBytesPerNs float64

	// DeviceBytes is the on-chip memory a memory node exposes.
	DeviceBytes uint64
}

// Header bytes from the InfiniBand Architecture Specification vol. 1,
// ch. 9 (LRH 8, BTH 12, RETH 16, AETH 4, AtomicETH 28, AtomicAckETH 8,
// ICRC 4, VCRC 2) and its RoCEv2 annex A17 (Ethernet 14 + FCS 4, IPv4 20,
// UDP 8, BTH 12, ICRC 4; plus the 8-byte preamble and 12-byte inter-frame
// gap IEEE 802.3 puts on the wire).
const (
	ibBaseHeader   = 8 + 12 + 4 + 2
	roceBaseHeader = 8 + 12 + 14 + 4 + 20 + 8 + 12 + 4
	reth           = 16
	aeth           = 4
	atomicETH      = 28
	atomicAckETH   = 8
)

// CX6 is the DMTree testbed: ConnectX-6, 100 Gb/s, an Ethernet switch
// (RoCEv2) (DMTree FAST'26 section 5, "Testbed").
var CX6 = Profile{
	Name: "cx6-100g",
	Desc: "NVIDIA ConnectX-6, 100 Gb/s RoCEv2 (the DMTree testbed)",
	// 100 Gb/s = 12.5 GB/s (NVIDIA ConnectX-6 documentation).
	LineRate: 12.5e9,
	// 60 Mops: the memory-side IOPS the DMTree authors quote for CX-6
	// (DMTree FAST'26 slides; measured CX-6 ranges 65-121 Mops).
	MsgRate: 60e6,
	// Same-address CAS 2.04 Mops on host memory, 8.65 Mops on on-chip
	// memory (a public CX-6 microbenchmark, FACTS.md).
	AtomicRateHost:   2.04e6,
	AtomicRateDevice: 8.65e6,
	// ~40 Mops for atomics to different addresses (efficient/rdma_bench
	// l3-atomics README).
	AtomicRateNode: 40e6,
	// max_qp_init_rd_atom = 16 on CX-6 (spdk issue 3069).
	MaxOutstanding: 16,
	MTU:            4096,
	BaseHeader:     roceBaseHeader,
	RETH:           reth,
	AETH:           aeth,
	AtomicETH:      atomicETH,
	AtomicAckETH:   atomicAckETH,
	// The stages sum to 1.95 us for an unloaded 8-byte READ: perftest
	// ib_read_lat measures 1.91 us on mlx5 (linux-rdma/perftest issue 131)
	// and dmbench's design takes 2.0 us as its starting point. PostNs assumes ~10 M doorbells/s per
	// core, the order one core reaches posting small verbs (Kalia et al.,
	// ATC'16).
	PostNs:    100,
	NICTxNs:   250,
	WireNs:    300,
	NICRxNs:   200,
	MemReadNs: 400,
	NICCompNs: 350,
	// ~10 M small RPCs/s per core (eRPC, Kalia et al., NSDI'19), on
	// either side: eRPC's per-core rate is measured with every core both
	// a client and a server, so a client's reply costs as much as a
	// server's request.
	RecvNs: 100,
	// A DRAM miss (~100 ns) and a single-core copy at ~10 GB/s.
	LocalAccessNs:   100,
	LocalBytesPerNs: 10,
	// 256 KB of on-chip memory, as Sherman uses (thustorage/Sherman README).
	DeviceBytes: 256 << 10,
}

// CX5 is the DEX and Dolphin testbed: ConnectX-5, 100 Gb/s InfiniBand
// (DEX VLDB'24 section 8, Dolphin section IV-A).
var CX5 = func() Profile {
	p := CX6
	p.Name = "cx5-100g"
	p.Desc = "NVIDIA ConnectX-5, 100 Gb/s InfiniBand (the DEX and Dolphin testbeds)"
	// No measured CX-5 memory-side rate is on record here; scale the
	// DMTree authors' CX-6 figure by the vendors' message-rate ratio
	// (ConnectX-5: 200 M msg/s, ConnectX-6: 215 M msg/s): 60 * 200/215.
	p.MsgRate = 60e6 * 200 / 215
	// InfiniBand link: no Ethernet/IP/UDP headers.
	p.BaseHeader = ibBaseHeader
	return p
}()

var profiles = map[string]Profile{CX6.Name: CX6, CX5.Name: CX5}

// ProfileNames lists the known profiles, sorted.
func ProfileNames() []string {
	names := make([]string, 0, len(profiles))
	for n := range profiles {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// LookupProfile returns the named profile.
func LookupProfile(name string) (Profile, error) {
	p, ok := profiles[name]
	if !ok {
		return Profile{}, fmt.Errorf("hardware profile %q is not one of: %s", name, strings.Join(ProfileNames(), ", "))
	}
	return p, nil
}

// Validate reports the first parameter that cannot drive the model.
func (p *Profile) Validate() error {
	pos := map[string]float64{
		"LineRate": p.LineRate, "MsgRate": p.MsgRate,
		"AtomicRateHost": p.AtomicRateHost, "AtomicRateDevice": p.AtomicRateDevice,
		"MTU": float64(p.MTU), "MaxOutstanding": float64(p.MaxOutstanding),
		"LocalBytesPerNs": p.LocalBytesPerNs,
	}
	for _, k := range sortedKeys(pos) {
		if pos[k] <= 0 {
			return fmt.Errorf("profile %q: %s = %v must be positive", p.Name, k, pos[k])
		}
	}
	if p.AtomicRateNode < 0 {
		return fmt.Errorf("profile %q: AtomicRateNode = %v must not be negative", p.Name, p.AtomicRateNode)
	}
	return nil
}

func sortedKeys(m map[string]float64) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
