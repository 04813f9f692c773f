package workloads

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand"
	randv2 "math/rand/v2"

	"github.com/pingcap/go-ycsb/pkg/generator"
	"github.com/pingcap/go-ycsb/pkg/prop"

	"github.com/dmbench/dmbench/internal/splitmix"
)

// OpType is the kind of an operation.
type OpType uint8

// The operation kinds of go-ycsb's core workload, and Delete.
const (
	Read OpType = iota
	Update
	Insert
	Scan
	ReadModifyWrite
	// Delete comes only from traces (tracefile): go-ycsb's core workload
	// has no deletes.
	Delete
)

// String returns the name go-ycsb's measurements use for the operation.
func (t OpType) String() string {
	switch t {
	case Read:
		return "READ"
	case Update:
		return "UPDATE"
	case Insert:
		return "INSERT"
	case Scan:
		return "SCAN"
	case ReadModifyWrite:
		return "READ_MODIFY_WRITE"
	case Delete:
		return "DELETE"
	}
	return fmt.Sprintf("OpType(%d)", uint8(t))
}

// Op is one operation of a stream. Key and Value belong to the Stream and
// are overwritten by its next call to Next: copy them to keep them.
type Op struct {
	Type       OpType
	Key        []byte // KeySize bytes; for Scan, the key the scan starts at
	Value      []byte // the value to write for Insert, Update and ReadModifyWrite; nil otherwise
	ScanLength int    // Scan: how many records to read, from 1 to MaxScanLength
}

// Client identifies one client (one coroutine issuing operations) in a
// cluster of compute nodes.
type Client struct {
	Node  int // its compute node, 0 <= Node < Nodes
	Nodes int // compute nodes in the cluster
	Index int // its number among all clients of the cluster, 0 <= Index < Total
	Total int // clients in the cluster, over all compute nodes
}

// Cluster numbers the clients of nodes compute nodes with clientsPerNode
// clients each, node by node.
func Cluster(nodes, clientsPerNode int) ([]Client, error) {
	if nodes < 1 || clientsPerNode < 1 {
		return nil, fmt.Errorf("workloads: cluster of %d nodes with %d clients each: want at least 1 of each", nodes, clientsPerNode)
	}
	clients := make([]Client, 0, nodes*clientsPerNode)
	for n := range nodes {
		for j := range clientsPerNode {
			clients = append(clients, Client{Node: n, Nodes: nodes, Index: n*clientsPerNode + j, Total: nodes * clientsPerNode})
		}
	}
	return clients, nil
}

// Share is this client's part of n operations split evenly over all
// clients; the shares of all clients add up to n.
func (c Client) Share(n int64) int64 {
	share := n / int64(c.Total)
	if int64(c.Index) < n%int64(c.Total) {
		share++
	}
	return share
}

func (c Client) validate() error {
	if c.Nodes < 1 || c.Node < 0 || c.Node >= c.Nodes || c.Total < 1 || c.Index < 0 || c.Index >= c.Total {
		return fmt.Errorf("workloads: client %+v: want 0 <= Node < Nodes and 0 <= Index < Total", c)
	}
	return nil
}

// Stream is the endless, deterministic operation sequence of one client.
// It is not safe for concurrent use; each client has its own.
type Stream struct {
	// The fields every Next reads come first, in a few cache lines, and
	// the random source lives inside the Stream: at 1,728 clients a
	// client's stream is cold in the cache whenever it runs again, and
	// each line it reads, or separate allocation it reaches through,
	// costs another miss per operation.
	trace   *traceStream // when set, the client's share of a replayed trace
	records chooser      // existing records; nil when the workload only inserts
	key     []byte
	// order and partitioned are spec.InsertOrder and spec.PartitionedKeys,
	// here in the first line rather than two lines of spec.
	order       InsertOrder
	partitioned bool
	rnd         rand.Rand  // the stream's draws; r returns it
	pcg         randv2.PCG // rnd's source
	// recordDraw and uniform hold what records points at, when it is a
	// below (newRecordChooser).
	recordDraw below
	uniform    generator.Uniform
	ops        opMix
	spec       Spec // a copy: later changes to the caller's Spec do not leak in
	client     Client
	scans      chooser            // scan lengths; nil without scans
	inserts    *generator.Counter // position in this client's insert sequence
	value      []byte
	// part, when set, replaces the client's equal partition: a
	// repartitioning moved its keys (SetPartition).
	part  *KeyRange
	probe []byte
	// drawSalt mixes seed and client into insertsplit=uniform's draws.
	drawSalt uint64
}

// Stream returns the operation stream of client c. The same Spec (seed
// included) and client give the same operations.
func (s *Spec) Stream(c Client) (*Stream, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if err := c.validate(); err != nil {
		return nil, err
	}
	st := &Stream{
		spec:        *s,
		client:      c,
		pcg:         *randv2.NewPCG(splitmix.Mix(uint64(s.Seed)), splitmix.Mix(uint64(c.Index)+splitmix.Golden)),
		order:       s.InsertOrder,
		partitioned: s.PartitionedKeys,
		inserts:     generator.NewCounter(0),
		key:         make([]byte, s.KeySize),
		value:       make([]byte, s.ValueSize()),
		drawSalt:    splitmix.Mix(uint64(s.Seed)^uniformSalt) ^ splitmix.Mix(uint64(c.Index)+splitmix.Golden),
	}
	st.rnd = *rand.New(pcgSource{&st.pcg})
	if s.TraceFile != "" {
		t, err := s.loadTrace()
		if err != nil {
			return nil, err
		}
		st.trace = newTraceStream(t, c)
		return st, nil
	}
	// The same order as go-ycsb's createOperationGenerator, so a file's
	// proportions map to draws the same way.
	for _, w := range []struct {
		p  float64
		op OpType
	}{
		{s.ReadProportion, Read},
		{s.UpdateProportion, Update},
		{s.InsertProportion, Insert},
		{s.ScanProportion, Scan},
		{s.ReadModifyWriteProportion, ReadModifyWrite},
	} {
		if w.p > 0 {
			st.ops.add(w.p, w.op)
		}
	}
	if err := st.checkPartition(); err != nil {
		return nil, err
	}
	if s.InsertProportion < 1 {
		st.records = newRecordChooser(st)
	}
	if s.ScanProportion > 0 {
		st.scans = newScanLengthChooser(s)
	}
	return st, nil
}

// checkPartition makes sure a partitioned client has loaded records to
// draw from and insert numbers to take, so that drawing again until a key
// falls in its partition ends.
func (st *Stream) checkPartition() error {
	if !st.spec.PartitionedKeys || st.client.Nodes == 1 {
		return nil
	}
	if loaded := partitionRecords(&st.spec, st.client.Nodes)[st.client.Node]; loaded == 0 && st.spec.InsertProportion < 1 {
		return fmt.Errorf("workloads: %s: partition %d of %d holds none of the %d records; use fewer compute nodes or more records",
			st.spec.Source, st.client.Node, st.client.Nodes, st.spec.RecordCount)
	}
	if st.spec.InsertOrder == Ordered && st.spec.InsertProportion > 0 && !st.spec.InsertAnywhere && st.client.Node != st.client.Nodes-1 {
		return fmt.Errorf("workloads: %s: %s=%s with inserts and partitioned keys: every insert takes a key past the loaded records, in the last partition, and compute node %d of %d would have none; use %s=%s, %s=true or no inserts",
			st.spec.Source, prop.InsertOrder, Ordered, st.client.Node, st.client.Nodes, prop.InsertOrder, Hashed, PropInsertAnywhere)
	}
	return nil
}

// Next returns the next operation.
func (st *Stream) Next() Op {
	if st.trace != nil {
		return st.nextTraced()
	}
	op := Op{Type: st.ops.next(st.r())}
	if op.Type == Insert {
		st.order.encodeRecord(&st.spec, st.key, st.nextInsert())
	} else {
		st.order.encodeRecord(&st.spec, st.key, st.nextRecord())
	}
	op.Key = st.key
	switch op.Type {
	case Update, ReadModifyWrite:
		if st.spec.KeyedUpdates {
			splitmix.Fill(st.value, keySeed(st.key)^updatedValueSalt)
		} else {
			st.fillValue()
		}
		op.Value = st.value
	case Insert:
		st.fillValue()
		op.Value = st.value
	case Scan:
		op.ScanLength = int(st.scans.next(st.r()))
	}
	return op
}

// nextTraced returns the client's next request of the trace. Written
// values are drawn like the generated workloads' values.
func (st *Stream) nextTraced() Op {
	t := st.trace.take()
	st.spec.InsertOrder.encode(st.key, t.number)
	op := Op{Type: t.op, Key: st.key}
	if t.op == Insert || t.op == Update {
		st.fillValue()
		op.Value = st.value
	}
	return op
}

// uniformSalt keeps uniform inserts' records independent of the stream's
// other hashes.
const uniformSalt = 0x3c6e_f372_fe94_f82b

// foldSalt keeps fold's positions independent of the keys' own hash.
const foldSalt = 0xf01d_5a17_c0ff_ee00

// nextRecord draws an existing record, again and again until its key lies
// in this client's partition when keys are partitioned, or, with
// PartitionFold, folds the one drawn onto the partition.
func (st *Stream) nextRecord() int64 {
	for {
		rec := st.records.next(st.r())
		if st.inPartition(rec) {
			return rec
		}
		if st.spec.PartitionFold {
			return st.fold(rec)
		}
	}
}

// fold maps a record outside this client's partition to one inside: the
// first loaded record, wrapping, at or after a position hashed from it.
// It is the counterpart of DMTree's key mod the node's share: that
// benchmark's key numbers are already scrambled, while a record number
// here is its popularity rank (the key hash scatters it), so neighbours
// of the drawn record are equally hot and must not fold together. Each of
// the partition's records receives about as many others as the modulo
// sends it, one per compute node on average.
//
// With ordered keys a partition's loaded records are contiguous, and fold
// is the artifact's formula itself: the partition's first record plus the
// drawn one modulo their count.
func (st *Stream) fold(rec int64) int64 {
	n := st.spec.RecordCount
	if st.spec.InsertOrder == Ordered {
		c, nodes := int64(st.client.Node), int64(st.client.Nodes)
		lo, hi := (c*n+nodes-1)/nodes, ((c+1)*n+nodes-1)/nodes
		return lo + rec%(hi-lo)
	}
	start := int64(splitmix.Mix(uint64(rec)^foldSalt) % uint64(n))
	for k := range n {
		if cand := (start + k) % n; st.inPartition(cand) {
			return cand
		}
	}
	panic(fmt.Sprintf("workloads: partition of compute node %d holds none of the %d loaded records", st.client.Node, n))
}

// nextInsert takes the next record number of this client's insert
// sequence, skipping numbers whose keys lie outside its partition unless
// inserts go anywhere (InsertAnywhere). A
// partitioned client whose sequence has left the permuted space (it drew
// more inserts than the space has free keys in its range for it) would
// find no more keys of its range: it inserts an existing record of its
// partition instead, an upsert, as DEX's benchmark does for every insert
// of its mixed workloads (an insert-only workload, which has none to draw,
// takes the number past the space, in the last partition).
func (st *Stream) nextInsert() int64 {
	for {
		rec := st.insertRecord(st.inserts.Next(st.r()))
		if st.spec.InsertAnywhere || st.inPartition(rec) {
			return rec
		}
		if st.spec.InsertOrder == Permuted && uint64(rec) >= st.spec.permutedSpace() {
			if st.records == nil { // an insert-only workload has no records to draw
				return rec
			}
			return st.nextRecord()
		}
	}
}

// insertRecord is the record number of position k of this client's insert
// sequence: the sequences of the clients interleave without overlap above
// the loaded records, lie in one chunk each, or are drawn over twice the
// loaded records (InsertSplit). Partitioned permuted keys interleave the clients of
// each compute node over all the numbers instead: a node takes the numbers
// whose keys fall in its range and the other nodes the rest, so the
// numbers the run inserts stay inside the permuted space that was sized
// for them.
func (st *Stream) insertRecord(k int64) int64 {
	c := st.client
	if st.spec.InsertSplit == Chunked {
		// A client issues at most its share of each phase, so a chunk of
		// that size holds all its inserts; should it insert more (a
		// caller running the stream longer), the numbers past every chunk
		// interleave as without chunks.
		chunk := ceilDiv(st.spec.WarmupOperationCount, c.Total) + ceilDiv(st.spec.OperationCount, c.Total)
		if k < chunk {
			return st.spec.RecordCount + int64(c.Index)*chunk + k
		}
		return st.spec.RecordCount + int64(c.Total)*chunk + int64(c.Index) + int64(c.Total)*(k-chunk)
	}
	if st.spec.InsertSplit == UniformDraw {
		// A hash of the position, not a draw from st.r(): knownRecord maps
		// positions back to records, and the op mix's draws stay as they
		// are.
		return int64(splitmix.Mix(st.drawSalt^uint64(k)) % uint64(2*st.spec.RecordCount))
	}
	if st.spec.PartitionedKeys && !st.spec.InsertAnywhere && st.spec.InsertOrder == Permuted && c.Total%c.Nodes == 0 {
		perNode := c.Total / c.Nodes
		return st.spec.RecordCount + int64(c.Index-c.Node*perNode) + int64(perNode)*k
	}
	return st.spec.RecordCount + int64(c.Index) + int64(c.Total)*k
}

func ceilDiv(n int64, d int) int64 { return (n + int64(d) - 1) / int64(d) }

// knownRecord maps position j of the records this client knows to exist
// (the loaded ones, then the positions of its insert sequence) to a record
// number.
func (st *Stream) knownRecord(j int64) int64 {
	if j < st.spec.RecordCount {
		return j
	}
	return st.insertRecord(j - st.spec.RecordCount)
}

// known is how many records this client knows to exist.
func (st *Stream) known() int64 {
	return st.spec.RecordCount + st.inserts.Last() + 1
}

func (st *Stream) inPartition(rec int64) bool {
	if !st.partitioned {
		return true
	}
	if st.part != nil {
		st.spec.encodeRecord(st.probe, rec)
		return st.part.Contains(st.probe)
	}
	return st.spec.partitionOf(st.spec.keyNumber(rec), st.client.Nodes) == st.client.Node
}

// SetPartition confines a partitioned client to the keys of r from its
// next operation on, as a repartitioning moves keys between compute nodes
// (DEX section 4). r must hold loaded records, so that drawing keys ends.
func (st *Stream) SetPartition(r KeyRange) error {
	if !st.spec.PartitionedKeys {
		return fmt.Errorf("workloads: %s: a partition for client %d, whose keys are not partitioned (set %s=true)", st.spec.Source, st.client.Index, PropPartitionedKeys)
	}
	if st.spec.PartitionFold && st.spec.InsertOrder == Ordered {
		return fmt.Errorf("workloads: %s: a partition for client %d, whose ordered keys are folded onto their node's share of the records (%s=true): folding follows only the initial partitions", st.spec.Source, st.client.Index, PropPartitionFold)
	}
	if len(r.Start) != st.spec.KeySize || r.End != nil && len(r.End) != st.spec.KeySize {
		return fmt.Errorf("workloads: partition bounds of %d and %d bytes for %d-byte keys", len(r.Start), len(r.End), st.spec.KeySize)
	}
	probe := make([]byte, st.spec.KeySize)
	for rec := range st.spec.RecordCount {
		if st.spec.encodeRecord(probe, rec); r.Contains(probe) {
			st.part, st.probe = &KeyRange{Start: bytes.Clone(r.Start), End: bytes.Clone(r.End)}, probe
			return nil
		}
	}
	return fmt.Errorf("workloads: %s: partition [%x, %x) holds none of the %d records", st.spec.Source, r.Start, r.End, st.spec.RecordCount)
}

// r is the stream's random source.
func (st *Stream) r() *rand.Rand { return &st.rnd }

func (st *Stream) fillValue() {
	var word [8]byte
	for off := 0; off < len(st.value); off += 8 {
		binary.BigEndian.PutUint64(word[:], st.r().Uint64())
		copy(st.value[off:], word[:])
	}
}

// pcgSource adapts math/rand/v2's PCG to the math/rand Source that go-ycsb's
// generators draw from. math/rand's own source reduces its seed modulo
// 2^31-1, so distinct (seed, client) pairs could share a stream; PCG takes
// 128 bits of seed and 16 bytes of state instead of 5 KB.
type pcgSource struct{ pcg *randv2.PCG }

func (s pcgSource) Int63() int64    { return int64(s.pcg.Uint64() >> 1) }
func (s pcgSource) Uint64() uint64  { return s.pcg.Uint64() }
func (s pcgSource) Seed(seed int64) { s.pcg.Seed(uint64(seed), 0) }
