package workloads

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/pingcap/go-ycsb/pkg/prop"
)

// dmbench's own property names; go-ycsb's are the constants of pkg/prop.
const (
	PropZipfianConstant      = "zipfianconstant"
	PropSeed                 = "seed"
	PropKeySize              = "keysize"
	PropPartitionedKeys      = "partitionedkeys"
	PropInsertAnywhere       = "insertanywhere"
	PropPartitionFold        = "partitionfold"
	PropKeyedUpdates         = "keyedupdates"
	PropWarmupOperationCount = "warmupoperationcount"
	PropWarmupReadAll        = "warmupreadall"
	PropInsertSplit          = "insertsplit"
)

// acceptedNames is what an unknown property name is told.
var acceptedNames = fmt.Sprintf("a go-ycsb core workload property (github.com/pingcap/go-ycsb/pkg/prop) or one of dmbench's: %s",
	strings.Join([]string{PropZipfianConstant, PropSeed, PropKeySize, PropPartitionedKeys, PropInsertAnywhere, PropPartitionFold, PropKeyedUpdates, PropWarmupOperationCount, PropWarmupReadAll, PropInsertSplit, PropTraceFile}, ", "))

// property is one accepted property name.
type property struct {
	name string
	want string                       // what is accepted, for errors
	set  func(s *Spec, v string) bool // parses v into s; false if malformed
	get  func(s *Spec) string         // formats it back; nil if it does not affect dmbench
}

// propertyTable lists every accepted property: first those that shape the
// stream, then go-ycsb's that are accepted for compatibility only.
var propertyTable = []property{
	intProp(prop.RecordCount, 0, maxRecords, func(s *Spec) *int64 { return &s.RecordCount }),
	intProp(prop.OperationCount, 0, maxCount, func(s *Spec) *int64 { return &s.OperationCount }),
	intProp(PropWarmupOperationCount, 0, maxCount, func(s *Spec) *int64 { return &s.WarmupOperationCount }),
	proportion(prop.ReadProportion, func(s *Spec) *float64 { return &s.ReadProportion }),
	proportion(prop.UpdateProportion, func(s *Spec) *float64 { return &s.UpdateProportion }),
	proportion(prop.InsertProportion, func(s *Spec) *float64 { return &s.InsertProportion }),
	proportion(prop.ScanProportion, func(s *Spec) *float64 { return &s.ScanProportion }),
	proportion(prop.ReadModifyWriteProportion, func(s *Spec) *float64 { return &s.ReadModifyWriteProportion }),
	distProp(prop.RequestDistribution, []Distribution{Uniform, Zipfian, Latest, Hotspot, Sequential},
		func(s *Spec) *Distribution { return &s.RequestDistribution }),
	floatProp(PropZipfianConstant, "a number strictly between 0 and 1 (YCSB uses 0.99)",
		func(f float64) bool { return f > 0 && f < 1 }, func(s *Spec) *float64 { return &s.ZipfianConstant }),
	floatProp(prop.HotspotDataFraction, "a fraction strictly between 0 and 1",
		func(f float64) bool { return f > 0 && f < 1 }, func(s *Spec) *float64 { return &s.HotspotDataFraction }),
	proportion(prop.HotspotOpnFraction, func(s *Spec) *float64 { return &s.HotspotOpnFraction }),
	intProp(prop.MaxScanLength, 1, maxScan, func(s *Spec) *int64 { return &s.MaxScanLength }),
	distProp(prop.ScanLengthDistribution, []Distribution{Uniform, Zipfian, Constant},
		func(s *Spec) *Distribution { return &s.ScanLengthDistribution }),
	intProp(prop.FieldCount, 1, maxValueSize, func(s *Spec) *int64 { return &s.FieldCount }),
	intProp(prop.FieldLength, 1, maxValueSize, func(s *Spec) *int64 { return &s.FieldLength }),
	intProp(PropKeySize, minKeySize, maxKeySize, func(s *Spec) *int { return &s.KeySize }),
	intProp(PropSeed, math.MinInt64, math.MaxInt64, func(s *Spec) *int64 { return &s.Seed }),
	boolProp(PropPartitionedKeys, func(s *Spec) *bool { return &s.PartitionedKeys }),
	omittedWhenFalse(boolProp(PropInsertAnywhere, func(s *Spec) *bool { return &s.InsertAnywhere })),
	omittedWhenFalse(boolProp(PropPartitionFold, func(s *Spec) *bool { return &s.PartitionFold })),
	omittedWhenFalse(boolProp(PropKeyedUpdates, func(s *Spec) *bool { return &s.KeyedUpdates })),
	readAllProp(),
	insertOrderProp(),
	insertSplitProp(),
	{name: PropTraceFile, want: "the path of a Twitter cache trace (CSV, plain or .zst)",
		set: func(s *Spec, v string) bool { s.TraceFile = v; return true },
		get: func(s *Spec) string { return s.TraceFile }},

	fixed(prop.Workload, "core", "site.ycsb.workloads.CoreWorkload"),
	fixed(prop.FieldLengthDistribution, "constant"),
	fixed(prop.InsertStart, "0"),
	compatible(prop.InsertCount, "an integer equal to recordcount", isIntAtLeast(0)),
	compatible(prop.ThreadCount, "an integer of at least 1", isIntAtLeast(1)),
	compatible(prop.Target, "an integer of at least 0", isIntAtLeast(0)),
	compatible(prop.MaxExecutiontime, "an integer of at least 0", isIntAtLeast(0)),
	compatible(prop.WarmUpTime, "an integer of at least 0", isIntAtLeast(0)),
	compatible(prop.BatchSize, "an integer of at least 1", isIntAtLeast(1)),
	compatible(prop.ZeroPadding, "an integer of at least 1", isIntAtLeast(1)),
	compatible(prop.InsertionRetryLimit, "an integer of at least 0", isIntAtLeast(0)),
	compatible(prop.InsertionRetryInterval, "an integer of at least 0", isIntAtLeast(0)),
	compatible(prop.LogInterval, "an integer of at least 0", isIntAtLeast(0)),
	compatible(prop.ExponentialPercentile, "a number", isFloat),
	compatible(prop.ExponentialFrac, "a number", isFloat),
	compatibleBool(prop.DoTransactions),
	compatibleBool(prop.Status),
	compatibleBool(prop.ReadAllFields),
	compatibleBool(prop.WriteAllFields),
	compatibleBool(prop.DataIntegrity),
	compatibleBool(prop.Verbose),
	compatibleBool(prop.DropData),
	compatibleBool(prop.Silence),
	compatibleBool(prop.MeasurementHistogramPercentileExport),
	compatibleString(prop.DB),
	compatibleString(prop.Exporter),
	compatibleString(prop.ExportFile),
	compatibleString(prop.Label),
	compatibleString(prop.TableName),
	compatibleString(prop.FieldLengthHistogramFile),
	compatibleString(prop.DebugPprof),
	compatibleString(prop.KeyPrefix),
	compatibleString(prop.MeasurementType),
	compatibleString(prop.MeasurementRawOutputFile),
	compatibleString(prop.Command),
	compatibleString(prop.OutputStyle),
	compatibleString(prop.MeasurementHistogramPercentileExportFilepath),
}

// propertyByName indexes propertyTable.
var propertyByName = func() map[string]property {
	m := make(map[string]property, len(propertyTable))
	for _, p := range propertyTable {
		m[p.name] = p
	}
	return m
}()

// insertOrderProp is go-ycsb's insertorder. Its default, hashed, is left
// out of Spec.Properties, so that the configuration hashes of results
// recorded before dmbench implemented ordered keys stay valid.
func insertOrderProp() property {
	return property{
		name: prop.InsertOrder,
		want: "one of hashed, ordered, permuted",
		set: func(s *Spec, v string) bool {
			s.InsertOrder = InsertOrder(v)
			return s.InsertOrder == Hashed || s.InsertOrder.dense()
		},
		get: func(s *Spec) string {
			if s.InsertOrder == Hashed {
				return ""
			}
			return string(s.InsertOrder)
		},
	}
}

// readAllProp is dmbench's warmupreadall: a boolean (false, or true for
// once in the cluster) or pernode. It records false and true as a boolean
// property did, so the configuration hashes of results recorded before
// pernode existed stay valid.
func readAllProp() property {
	return property{
		name: PropWarmupReadAll,
		want: "false, true (each record once in the cluster) or pernode (each record once on every compute node)",
		set: func(s *Spec, v string) bool {
			if v == string(ReadAllPerNode) {
				s.WarmupReadAll = ReadAllPerNode
				return true
			}
			b, ok := parseBool(v)
			s.WarmupReadAll = NoReadAll
			if b {
				s.WarmupReadAll = ReadAllOnce
			}
			return ok
		},
		get: func(s *Spec) string {
			if s.WarmupReadAll == "" {
				return string(NoReadAll)
			}
			return string(s.WarmupReadAll)
		},
	}
}

// insertSplitProp is dmbench's insertsplit. Its default, interleaved, is
// left out of Spec.Properties, so that the configuration hashes of results
// recorded before dmbench had it stay valid.
func insertSplitProp() property {
	return property{
		name: PropInsertSplit,
		want: "one of interleaved, chunked, uniform",
		set: func(s *Spec, v string) bool {
			s.InsertSplit = InsertSplit(v)
			return s.InsertSplit == Interleaved || s.InsertSplit == Chunked || s.InsertSplit == UniformDraw
		},
		get: func(s *Spec) string {
			if s.InsertSplit == Interleaved {
				return ""
			}
			return string(s.InsertSplit)
		},
	}
}

// boolProp is a boolean dmbench property.
func boolProp(name string, field func(*Spec) *bool) property {
	return property{
		name: name,
		want: "a boolean (true, false, 1, 0, yes, no, on, off)",
		set: func(s *Spec, v string) bool {
			b, ok := parseBool(v)
			*field(s) = b
			return ok
		},
		get: func(s *Spec) string { return strconv.FormatBool(*field(s)) },
	}
}

// omittedWhenFalse leaves a boolean property out of Spec.Properties while
// it is false, so that the configuration hashes of results recorded before
// dmbench had it stay valid.
func omittedWhenFalse(p property) property {
	get := p.get
	p.get = func(s *Spec) string {
		if v := get(s); v != "false" {
			return v
		}
		return ""
	}
	return p
}

func intProp[T int | int64](name string, lo, hi int64, field func(*Spec) *T) property {
	want := fmt.Sprintf("an integer from %d to %d", lo, hi)
	switch {
	case lo == math.MinInt64:
		want = "a 64-bit integer"
	case hi == maxCount:
		want = fmt.Sprintf("an integer of at least %d", lo)
	}
	return property{
		name: name,
		want: want,
		set: func(s *Spec, v string) bool {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n < lo || n > hi {
				return false
			}
			*field(s) = T(n)
			return true
		},
		get: func(s *Spec) string { return strconv.FormatInt(int64(*field(s)), 10) },
	}
}

func floatProp(name, want string, valid func(float64) bool, field func(*Spec) *float64) property {
	return property{
		name: name,
		want: want,
		set: func(s *Spec, v string) bool {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil || !valid(f) {
				return false
			}
			*field(s) = f
			return true
		},
		get: func(s *Spec) string { return strconv.FormatFloat(*field(s), 'g', -1, 64) },
	}
}

func proportion(name string, field func(*Spec) *float64) property {
	return floatProp(name, "a proportion from 0 to 1", func(f float64) bool { return f >= 0 && f <= 1 }, field)
}

func distProp(name string, allowed []Distribution, field func(*Spec) *Distribution) property {
	names := make([]string, len(allowed))
	for i, d := range allowed {
		names[i] = string(d)
	}
	return property{
		name: name,
		want: "one of " + strings.Join(names, ", "),
		set: func(s *Spec, v string) bool {
			if !slices.Contains(allowed, Distribution(v)) {
				return false
			}
			*field(s) = Distribution(v)
			return true
		},
		get: func(s *Spec) string { return string(*field(s)) },
	}
}

// fixed accepts a go-ycsb property only with the values dmbench implements.
func fixed(name string, values ...string) property {
	return compatible(name, "one of "+strings.Join(values, ", ")+" (the only behaviour dmbench implements)",
		func(v string) bool { return slices.Contains(values, v) })
}

// compatible accepts a go-ycsb property that does not change the stream,
// checking only that its value is well formed.
func compatible(name, want string, valid func(string) bool) property {
	return property{name: name, want: want, set: func(_ *Spec, v string) bool { return valid(v) }}
}

func compatibleBool(name string) property {
	return compatible(name, "a boolean (true, false, 1, 0, yes, no, on, off)", func(v string) bool {
		_, ok := parseBool(v)
		return ok
	})
}

func compatibleString(name string) property {
	return compatible(name, "any string", func(string) bool { return true })
}

func isIntAtLeast(lo int64) func(string) bool {
	return func(v string) bool {
		n, err := strconv.ParseInt(v, 10, 64)
		return err == nil && n >= lo
	}
}

func isFloat(v string) bool {
	_, err := strconv.ParseFloat(v, 64)
	return err == nil
}

// parseBool accepts strconv's spellings and the yes/no/on/off that go-ycsb's
// property reader treats as booleans.
func parseBool(v string) (bool, bool) {
	switch strings.ToLower(v) {
	case "1", "t", "true", "yes", "on":
		return true, true
	case "0", "f", "false", "no", "off":
		return false, true
	}
	return false, false
}

// checkInsertRange rejects an insertcount that would load only part of the
// records: go-ycsb uses insertstart/insertcount to split a load over
// several processes, dmbench always bulk-loads recordcount records.
func checkInsertRange(s *Spec, merged Properties, origin map[string]string) []*PropertyError {
	v, ok := merged[prop.InsertCount]
	if !ok {
		return nil
	}
	v = strings.TrimSpace(v)
	if n, err := strconv.ParseInt(v, 10, 64); err == nil && n == s.RecordCount {
		return nil
	}
	return []*PropertyError{{Source: origin[prop.InsertCount], Property: prop.InsertCount, Value: v,
		Want: fmt.Sprintf("recordcount (%d): dmbench bulk-loads every record in one piece", s.RecordCount)}}
}
