package workloads

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/pingcap/go-ycsb/pkg/generator"
	"github.com/pingcap/go-ycsb/pkg/prop"
)

// Distribution names a request or scan-length distribution, spelt as in
// go-ycsb's requestdistribution and scanlengthdistribution properties.
type Distribution string

// The distributions dmbench implements. Constant is dmbench's addition for
// scan lengths only: every scan reads exactly MaxScanLength records.
const (
	Uniform    Distribution = "uniform"
	Zipfian    Distribution = "zipfian"
	Latest     Distribution = "latest"
	Hotspot    Distribution = "hotspot"
	Sequential Distribution = "sequential"
	Constant   Distribution = "constant"
)

// Spec is one workload: the typed content of a property file after
// overrides. Build it with Load, Parse, FromProperties or Builtin; a Spec
// changed by hand is checked again by Validate, Stream, Records and
// Partitions.
type Spec struct {
	Name   string // the file name without ".properties", e.g. "dex-read-only"
	Source string // where the properties came from, for messages

	RecordCount          int64 // records bulk-loaded before the run
	OperationCount       int64 // measured operations, over all clients
	WarmupOperationCount int64 // operations run before measuring, over all clients

	ReadProportion            float64
	UpdateProportion          float64
	InsertProportion          float64
	ScanProportion            float64
	ReadModifyWriteProportion float64

	RequestDistribution Distribution // uniform, zipfian, latest, hotspot or sequential
	ZipfianConstant     float64      // skew of zipfian and latest, in (0, 1)
	HotspotDataFraction float64      // hotspot: share of records that are hot
	HotspotOpnFraction  float64      // hotspot: share of operations that go to them

	MaxScanLength          int64        // records per scan, at most
	ScanLengthDistribution Distribution // uniform, zipfian or constant

	FieldCount  int64 // a record's value is FieldCount*FieldLength bytes
	FieldLength int64
	KeySize     int // bytes per key, big-endian
	// InsertOrder is how record numbers become keys: hashed (scattered,
	// the default) or ordered (dense integers).
	InsertOrder InsertOrder
	// InsertSplit is how the clients share the insert numbers:
	// interleaved (the default) or in one contiguous chunk each.
	InsertSplit InsertSplit

	Seed            int64 // seeds every stream
	PartitionedKeys bool  // compute node c draws only keys of partition c
	// InsertAnywhere, with PartitionedKeys, confines only the operations
	// on existing records to the node's partition: inserts take the
	// client's insert sequence wherever its keys fall, as DMTree's
	// benchmark (muouim/aefast26 benchmarks/ycsbc.cc) remaps only
	// non-insert keys into a compute node's range.
	InsertAnywhere bool
	// PartitionFold, with PartitionedKeys, folds a record drawn outside
	// the node's partition onto one inside it instead of drawing again,
	// as DMTree's benchmark maps a key into its compute node's range
	// (ycsbc.cc: key mod the node's share of the loaded keys, plus the
	// range's start): each node then sees the whole distribution folded
	// onto its range rather than the global one cut to it.
	PartitionFold bool
	// KeyedUpdates makes every update of a key write one value derived
	// from the key (not its loaded value), as DEX's benchmark writes each
	// key as its own value over a load of key+1 (baotonglu/dex
	// test/newbench.cpp): a key's first update changes it, later ones
	// rewrite what it holds, which an index may skip (SMART does).
	KeyedUpdates bool
	// WarmupReadAll asks the runner to read every loaded record before
	// the warm-up mix, as DMTree's evaluation warms its caches (DMTree
	// section 5.1): once in the cluster, or once on every compute node.
	WarmupReadAll ReadAll
	// TraceFile, when set, replays a Twitter cache trace instead of
	// drawing operations (see trace.go): recordcount then counts the trace
	// lines whose keys are bulk-loaded, and the proportions and
	// distributions are not used.
	TraceFile string
}

// Limits on what a Spec may ask for. Record numbers must stay far below 2^63
// for the insert numbering; keys and values are bounded by what an index
// node can sensibly hold.
const (
	maxRecords   = 1 << 48
	minKeySize   = 8
	maxKeySize   = 256
	maxValueSize = 1 << 20
	maxScan      = 1 << 30
	maxCount     = math.MaxInt64 / 2 // operation counts: any a run can reach
)

// defaultSpec holds go-ycsb's defaults for its properties and dmbench's for
// its own.
func defaultSpec() Spec {
	return Spec{
		RecordCount:               prop.RecordCountDefault,
		ReadProportion:            prop.ReadProportionDefault,
		UpdateProportion:          prop.UpdateProportionDefault,
		InsertProportion:          prop.InsertProportionDefault,
		ScanProportion:            prop.ScanProportionDefault,
		ReadModifyWriteProportion: prop.ReadModifyWriteProportionDefault,
		RequestDistribution:       Distribution(prop.RequestDistributionDefault),
		ZipfianConstant:           generator.ZipfianConstant,
		HotspotDataFraction:       prop.HotspotDataFractionDefault,
		HotspotOpnFraction:        prop.HotspotOpnFractionDefault,
		MaxScanLength:             prop.MaxScanLengthDefault,
		ScanLengthDistribution:    Distribution(prop.ScanLengthDistributionDefault),
		FieldCount:                prop.FieldCountDefault,
		FieldLength:               prop.FieldLengthDefault,
		KeySize:                   8,
		InsertOrder:               Hashed,
		InsertSplit:               Interleaved,
		WarmupReadAll:             NoReadAll,
		Seed:                      1,
	}
}

// ValueSize is the size of every value in bytes.
func (s *Spec) ValueSize() int {
	return int(s.FieldCount * s.FieldLength)
}

// Properties returns the Spec as the properties that build it again: every
// property that affects dmbench, with its effective value, for a result to
// record so that its run can be repeated from the result alone.
func (s *Spec) Properties() Properties {
	props := make(Properties)
	for _, p := range propertyTable {
		if p.get == nil {
			continue
		}
		// An empty value is a property at a default that results from
		// before the property existed did not record.
		if v := p.get(s); v != "" {
			props[p.name] = v
		}
	}
	return props
}

// Validate checks every field as the property parser would, and the rules
// that tie fields together.
func (s *Spec) Validate() error {
	source := s.Source
	if source == "" {
		source = "workload spec"
	}
	_, err := build(s.Name, source, s.Properties(), nil)
	return err
}

// crossCheck applies the rules that involve more than one property.
func (s *Spec) crossCheck() []*PropertyError {
	var errs []*PropertyError
	fail := func(property, value, want string) {
		errs = append(errs, &PropertyError{Source: s.Source, Property: property, Value: value, Want: want})
	}
	sum := s.ReadProportion + s.UpdateProportion + s.InsertProportion + s.ScanProportion + s.ReadModifyWriteProportion
	if math.Abs(sum-1) > 1e-9 {
		fail(strings.Join([]string{prop.ReadProportion, prop.UpdateProportion, prop.InsertProportion,
			prop.ScanProportion, prop.ReadModifyWriteProportion}, "+"),
			strconv.FormatFloat(sum, 'g', -1, 64),
			"proportions adding up to 1 (go-ycsb would rescale them silently)")
	}
	if s.RecordCount == 0 && sum-s.InsertProportion > 0 && s.TraceFile == "" {
		fail(prop.RecordCount, "0",
			"at least 1 record for reads, updates, scans and read-modify-writes (0 suits insert-only workloads)")
	}
	if s.RequestDistribution == Hotspot {
		hot := int64(float64(s.RecordCount) * s.HotspotDataFraction)
		if hot < 1 || hot >= s.RecordCount {
			fail(prop.HotspotDataFraction, strconv.FormatFloat(s.HotspotDataFraction, 'g', -1, 64),
				fmt.Sprintf("a fraction leaving at least one hot and one cold record among recordcount=%d", s.RecordCount))
		}
	}
	if s.FieldCount*s.FieldLength > maxValueSize {
		fail(prop.FieldLength, strconv.FormatInt(s.FieldLength, 10),
			fmt.Sprintf("fieldcount*fieldlength of at most %d bytes (fieldcount=%d)", maxValueSize, s.FieldCount))
	}
	if s.InsertAnywhere && !s.PartitionedKeys {
		fail(PropInsertAnywhere, "true", "false unless "+PropPartitionedKeys+"=true: without partitions every insert goes anywhere")
	}
	if s.InsertSplit == Chunked && s.InsertOrder == Permuted {
		fail(PropInsertSplit, string(Chunked), "interleaved with insertorder=permuted: its key space has room for the inserts the workload draws, not for a chunk of every client's operations")
	}
	if s.InsertSplit == Chunked && s.PartitionedKeys && !s.InsertAnywhere {
		fail(PropInsertSplit, string(Chunked), "interleaved with "+PropPartitionedKeys+"=true unless "+PropInsertAnywhere+"=true: a client's chunk lies outside its partition")
	}
	if s.InsertSplit == UniformDraw && s.InsertOrder == Permuted {
		fail(PropInsertSplit, string(UniformDraw), "interleaved or chunked with insertorder=permuted: its key space has room for the inserts the workload draws, not for twice the loaded records")
	}
	if s.InsertSplit == UniformDraw && s.PartitionedKeys {
		fail(PropInsertSplit, string(UniformDraw), "interleaved or chunked with "+PropPartitionedKeys+"=true: a drawn record may lie in any partition")
	}
	if s.InsertSplit == UniformDraw && s.RecordCount == 0 {
		fail(PropInsertSplit, string(UniformDraw), "interleaved or chunked with recordcount=0: the key space it draws from is twice the loaded records")
	}
	if s.PartitionFold && !s.PartitionedKeys {
		fail(PropPartitionFold, "true", "false unless "+PropPartitionedKeys+"=true: without partitions nothing is folded")
	}
	return append(errs, s.checkTrace()...)
}
