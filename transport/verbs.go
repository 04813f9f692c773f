package transport

import (
	"fmt"
	"math/rand/v2"
)

// VerbKind is the type of one remote operation.
type VerbKind uint8

// The verbs. RPC is a two-sided SEND and its reply.
const (
	VerbRead VerbKind = iota
	VerbWrite
	VerbCAS
	VerbMaskedCAS
	VerbFAA
	VerbRPC
	NumVerbKinds
)

var verbNames = [NumVerbKinds]string{"read", "write", "cas", "masked_cas", "faa", "rpc"}

func (v VerbKind) String() string {
	if v < NumVerbKinds {
		return verbNames[v]
	}
	return fmt.Sprintf("verb(%d)", uint8(v))
}

// Atomic reports whether the verb is an 8-byte atomic.
func (v VerbKind) Atomic() bool { return v == VerbCAS || v == VerbMaskedCAS || v == VerbFAA }

// Op is one work request of a doorbell batch (Endpoint.Post).
//
// READ fills Buf from Addr; WRITE copies Buf to Addr; the atomics act on the
// 8-byte word at Addr and leave the word's previous value in Old.
type Op struct {
	Kind     VerbKind
	Addr     GAddr
	Buf      []byte // READ destination or WRITE source
	Expect   uint64 // CAS, masked CAS: compare value
	Swap     uint64 // CAS, masked CAS: new value
	CmpMask  uint64 // masked CAS: bits compared
	SwapMask uint64 // masked CAS: bits replaced
	Add      uint64 // FAA: addend
	Old      uint64 // atomics: value before the operation (output)
}

// Len is the number of payload bytes the op moves.
func (o *Op) Len() uint64 {
	if o.Kind.Atomic() {
		return 8
	}
	return uint64(len(o.Buf))
}

// ReadOp, WriteOp, CASOp, MaskedCASOp and FAAOp build batch entries.
func ReadOp(dst []byte, src GAddr) Op  { return Op{Kind: VerbRead, Addr: src, Buf: dst} }
func WriteOp(dst GAddr, src []byte) Op { return Op{Kind: VerbWrite, Addr: dst, Buf: src} }
func CASOp(a GAddr, expect, swap uint64) Op {
	return Op{Kind: VerbCAS, Addr: a, Expect: expect, Swap: swap}
}
func MaskedCASOp(a GAddr, expect, swap, cmpMask, swapMask uint64) Op {
	return Op{Kind: VerbMaskedCAS, Addr: a, Expect: expect, Swap: swap, CmpMask: cmpMask, SwapMask: swapMask}
}
func FAAOp(a GAddr, add uint64) Op { return Op{Kind: VerbFAA, Addr: a, Add: add} }

// Apply computes an atomic's effect on the word old: the new word and
// whether the word changes. It is the one definition every fabric uses.
//
// Masked CAS follows the ConnectX extended atomics: the compare succeeds
// when the bits of CmpMask agree, and then only the bits of SwapMask are
// replaced.
func (o *Op) Apply(old uint64) (uint64, bool) {
	switch o.Kind {
	case VerbCAS:
		if old == o.Expect {
			return o.Swap, true
		}
	case VerbMaskedCAS:
		if old&o.CmpMask == o.Expect&o.CmpMask {
			return old&^o.SwapMask | o.Swap&o.SwapMask, true
		}
	case VerbFAA:
		return old + o.Add, true
	}
	return old, false
}

// Endpoint is one client coroutine's view of the fabric, like a set of RC
// QPs to every node. Verbs block the caller until they complete (on the
// simulator: in virtual time). A verb to the endpoint's own node is a local
// memory access: it works like any verb but involves no NIC and is not
// counted in Stats, because it is not RDMA (DMTree's fingerprint tables on
// their primary node, a memory node's RPC handler walking its own memory).
// An Endpoint is not safe for concurrent use.
type Endpoint interface {
	Read(dst []byte, src GAddr) error
	Write(dst GAddr, src []byte) error
	CAS(a GAddr, expect, swap uint64) (old uint64, err error)
	MaskedCAS(a GAddr, expect, swap, cmpMask, swapMask uint64) (old uint64, err error)
	FAA(a GAddr, add uint64) (old uint64, err error)
	// Post rings one doorbell for ops; they execute in order on each QP
	// and Post returns when all have completed. Atomics write their old
	// value into ops[i].Old, so pass a slice (Post(ops...)) to read them.
	Post(ops ...Op) error
	// Call sends req to the handler registered for method on node n and
	// waits for its reply, which is the caller's: no fabric reuses its
	// bytes.
	Call(n NodeID, method uint16, req []byte) ([]byte, error)
	// Compute charges ns of local CPU work to the caller's thread.
	Compute(ns int64)
	// Now is the current time in nanoseconds (virtual on the simulator).
	Now() int64
	// Node is the node this endpoint runs on; Thread its thread there.
	Node() NodeID
	Thread() int
	// Rand is this endpoint's deterministic random source: index code
	// must draw randomness only from here.
	Rand() *rand.Rand
	// SetTag attributes the verbs that follow to an operation type (set
	// by the runner, e.g. search vs insert); Tag reads it back.
	SetTag(t Tag)
	Tag() Tag
	// SetStep labels the time that follows, until the next SetStep or
	// SetTag, as one step of the index's algorithm (DMTree Table 1's
	// "locking", "FP sync"); SetTag starts every operation at step 0,
	// unlabelled. Step reads it back.
	SetStep(s Step)
	Step() Step
	// Sleep waits ns without occupying the caller's core: a timer, as a
	// runner uses to start an event mid-run.
	Sleep(ns int64)
	// Backoff waits about ns before a retry, spinning on the caller's
	// core, so that the holder of what the caller waits for gets to run:
	// on the simulator it is Compute(ns); on real fabrics, where Compute
	// is free, it yields the processor to the thread waited for.
	Backoff(ns int64)
	// Park blocks the caller until another endpoint calls Unpark on it.
	// Only the blocking primitives of this package (Mutex, RWMutex, Gate)
	// use it.
	Park()
	Unpark()
}

// Handler serves one RPC method on a node. ep is an endpoint of the serving
// node: its verbs on that node's own memory are local memory accesses, and
// its Compute charges the node's RPC core.
type Handler func(ep Endpoint, req []byte) ([]byte, error)

// Reserved RPC methods; index methods must stay below MethodReserved.
const (
	MethodReserved   uint16 = 0xff00
	MethodAllocChunk uint16 = 0xff01
)

// Fabric is a running cluster. Construction and the methods that change the
// cluster (AddRegion, Handle, Go) happen before Run; Stats and ResetStats
// between runs.
type Fabric interface {
	// Name is "sim", "local", ...
	Name() string
	Config() Config
	// Regions lists a node's regions in address order.
	Regions(n NodeID) []Region
	// Region returns a node's region by name ("main", "device", ...).
	Region(n NodeID, name string) (Region, error)
	// AddRegion registers another region of size bytes on node n.
	AddRegion(n NodeID, name string, size uint64) (Region, error)
	// Handle registers h for method on node n.
	Handle(n NodeID, method uint16, h Handler)
	// Setup returns an endpoint on node n whose verbs take effect at once,
	// outside simulated time and statistics: for bulk loading and
	// initialisation. It must not be used while Run is in progress.
	Setup(n NodeID) Endpoint
	// Go adds a client that runs body on thread (0-based) of compute node n.
	Go(n NodeID, thread int, body func(Endpoint))
	// Run runs every client added by Go to completion. The first panic or
	// deadlock ends it with an error.
	Run() error
	// Stats is every counter since the last ResetStats.
	Stats() Stats
	ResetStats()
	// Close releases the fabric's memory and helpers.
	Close() error
}
