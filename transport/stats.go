package transport

import (
	"fmt"
	"strings"
)

// Tag attributes verbs to the operation type the caller is performing. The
// runner assigns meanings (search, insert, ...); transport only counts.
type Tag uint8

// MaxTags bounds the number of distinct tags.
const MaxTags = 16

// VerbCount counts one verb kind: how many, and the payload bytes sent with
// the requests (WRITE data, RPC requests, atomic operands) and returned in
// the responses (READ data, RPC replies, atomic old values).
type VerbCount struct {
	Count    uint64 `json:"count"`
	BytesOut uint64 `json:"bytes_out"`
	BytesIn  uint64 `json:"bytes_in"`
}

// Counters holds one VerbCount per verb kind.
type Counters [NumVerbKinds]VerbCount

// Add accumulates o into c.
func (c *Counters) Add(o *Counters) {
	for i := range c {
		c[i].Count += o[i].Count
		c[i].BytesOut += o[i].BytesOut
		c[i].BytesIn += o[i].BytesIn
	}
}

// Verbs is the total count over all kinds; Bytes the total payload.
func (c Counters) Verbs() uint64 {
	var n uint64
	for i := range c {
		n += c[i].Count
	}
	return n
}

// Bytes is the payload moved in both directions over all kinds.
func (c Counters) Bytes() uint64 {
	var n uint64
	for i := range c {
		n += c[i].BytesOut + c[i].BytesIn
	}
	return n
}

// String lists the kinds counted, as "read x2 (16 B out, 2048 B in),
// write x1 (...)", or "none": golden verb tests print it.
func (c Counters) String() string {
	var parts []string
	for k, v := range c {
		if v.Count > 0 {
			parts = append(parts, fmt.Sprintf("%s x%d (%d B out, %d B in)", VerbKind(k), v.Count, v.BytesOut, v.BytesIn))
		}
	}
	if parts == nil {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// Step labels a stretch of an operation by the index's own algorithm
// (Endpoint.SetStep). An index names its steps in its Spec; 0 is the
// unlabelled rest of an operation.
type Step uint8

// MaxSteps bounds the number of distinct steps.
const MaxSteps = 16

// Activity is what a client's time went to, as the fabric sees it.
type Activity uint8

// The activities. A batch of verbs (Post) counts as its strongest kind:
// atomic over WRITE over READ.
const (
	ActRead    Activity = iota // waiting for READs
	ActWrite                   // waiting for WRITEs
	ActAtomic                  // waiting for CAS, masked CAS or FAA
	ActRPC                     // waiting for an RPC reply
	ActCompute                 // local CPU work (Compute, doorbells)
	ActWait                    // parked on a lock, or asleep
	NumActivities
)

var activityNames = [NumActivities]string{"read", "write", "atomic", "rpc", "compute", "wait"}

func (a Activity) String() string {
	if a < NumActivities {
		return activityNames[a]
	}
	return "activity?"
}

// TimeStats is where clients' time went, in nanoseconds, by the tag in
// force: by activity and by the index's steps. The simulator measures it
// in virtual time; the real fabrics leave it zero.
type TimeStats struct {
	Activity [MaxTags][NumActivities]int64
	Steps    [MaxTags][MaxSteps]int64
}

// Add accumulates o into t.
func (t *TimeStats) Add(o *TimeStats) {
	for tag := range t.Activity {
		for a := range t.Activity[tag] {
			t.Activity[tag][a] += o.Activity[tag][a]
		}
		for s := range t.Steps[tag] {
			t.Steps[tag][s] += o.Steps[tag][s]
		}
	}
}

// VerbStats is what an endpoint counts: by the tag in force when the verb
// was issued and by target node. Doorbells counts Post calls and single
// verbs (each rings one doorbell). Time is where the time went.
type VerbStats struct {
	ByTag     [MaxTags]Counters
	ByNode    []Counters // indexed by target NodeID
	Doorbells uint64
	Time      TimeStats
}

// Count records one verb of kind v to node n carrying out/in payload bytes.
func (s *VerbStats) Count(t Tag, n NodeID, v VerbKind, out, in uint64) {
	c := &s.ByTag[t%MaxTags][v]
	c.Count++
	c.BytesOut += out
	c.BytesIn += in
	if int(n) >= len(s.ByNode) {
		grown := make([]Counters, int(n)+1)
		copy(grown, s.ByNode)
		s.ByNode = grown
	}
	d := &s.ByNode[n][v]
	d.Count++
	d.BytesOut += out
	d.BytesIn += in
}

// Merge adds o into s.
func (s *VerbStats) Merge(o *VerbStats) {
	for t := range s.ByTag {
		s.ByTag[t].Add(&o.ByTag[t])
	}
	if len(o.ByNode) > len(s.ByNode) {
		grown := make([]Counters, len(o.ByNode))
		copy(grown, s.ByNode)
		s.ByNode = grown
	}
	for n := range o.ByNode {
		s.ByNode[n].Add(&o.ByNode[n])
	}
	s.Doorbells += o.Doorbells
	s.Time.Add(&o.Time)
}

// Total sums the counters over all tags.
func (s *VerbStats) Total() Counters {
	var c Counters
	for t := range s.ByTag {
		c.Add(&s.ByTag[t])
	}
	return c
}

// NodeStats is what one node's NIC and cores did. Busy times are the
// service times of the simulator's FIFO resources; real fabrics leave them
// zero.
type NodeStats struct {
	ID   NodeID `json:"id"`
	Role Role   `json:"-"`
	// Msgs counts messages processed by the NIC, as requester or
	// responder; RPCs the requests served by the node's handlers.
	Msgs uint64 `json:"msgs"`
	RPCs uint64 `json:"rpcs"`
	// BytesTx and BytesRx are wire bytes, headers included.
	BytesTx uint64 `json:"bytes_tx"`
	BytesRx uint64 `json:"bytes_rx"`
	// MsgBusyNs, TxBusyNs and RxBusyNs are the busy times of the NIC's
	// message processing and of its two link directions; CPUBusyNs sums
	// the busy time of the node's RPC cores (of Cores) and ThreadBusyNs of
	// its client threads (of Threads).
	MsgBusyNs    int64 `json:"msg_busy_ns"`
	TxBusyNs     int64 `json:"tx_busy_ns"`
	RxBusyNs     int64 `json:"rx_busy_ns"`
	CPUBusyNs    int64 `json:"cpu_busy_ns"`
	ThreadBusyNs int64 `json:"thread_busy_ns"`
	Cores        int   `json:"cores"`
	Threads      int   `json:"threads"`
}

// Stats is a fabric's counters over a window of time.
type Stats struct {
	// WindowNs is the time since the last reset (virtual on sim).
	WindowNs int64
	Verbs    VerbStats
	Nodes    []NodeStats
	// Profile names the hardware model behind busy times ("" when none);
	// MsgRate and LineRate are its per-node capacities (messages/s,
	// bytes/s per direction), for utilisation.
	Profile  string
	MsgRate  float64
	LineRate float64
}

// Utilisation of node i over the window: NIC message processing, link
// (the busier direction), RPC cores and client threads, each in [0,1].
func (s *Stats) Utilisation(i int) (msg, bw, cpu, threads float64) {
	n := &s.Nodes[i]
	if s.WindowNs <= 0 {
		return
	}
	w := float64(s.WindowNs)
	msg = float64(n.MsgBusyNs) / w
	bw = float64(max(n.TxBusyNs, n.RxBusyNs)) / w
	if n.Cores > 0 {
		cpu = float64(n.CPUBusyNs) / (w * float64(n.Cores))
	}
	if n.Threads > 0 {
		threads = float64(n.ThreadBusyNs) / (w * float64(n.Threads))
	}
	return
}
