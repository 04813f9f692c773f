package workloads

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/klauspost/compress/zstd"
	"github.com/pingcap/go-ycsb/pkg/prop"

	"github.com/dmbench/dmbench/internal/splitmix"
)

// PropTraceFile names a Twitter cache trace (twitter/cache-trace, Yang et
// al., OSDI 2020) to replay instead of drawing operations: a CSV file,
// plain or zstd-compressed, one request per line.
const PropTraceFile = "tracefile"

// TraceFiles are the files of the Twitter cache traces dmbench's figures
// replay, with where to fetch them: each holds the first 10^9 requests of
// its cluster.
var TraceFiles = map[string]string{
	"cluster8.0.zst": "https://ftp.pdl.cmu.edu/pub/datasets/twemcacheWorkload/open_source/cluster8.0.zst",
	"cluster9.0.zst": "https://ftp.pdl.cmu.edu/pub/datasets/twemcacheWorkload/open_source/cluster9.0.zst",
}

// zstdMagic starts every zstd frame; a trace that begins with it is
// decompressed whatever its name.
var zstdMagic = []byte{0x28, 0xb5, 0x2f, 0xfd}

// traceOps maps the trace's operations onto the runner's: get and gets
// read; the writes insert a key the index does not hold and update one it
// does; delete deletes.
var traceOps = map[string]traceKind{
	"get": traceRead, "gets": traceRead,
	"set": traceWrite, "add": traceWrite, "replace": traceWrite, "cas": traceWrite,
	"append": traceWrite, "prepend": traceWrite, "incr": traceWrite, "decr": traceWrite,
	"delete": traceDelete,
}

type traceKind uint8

const (
	traceRead traceKind = iota
	traceWrite
	traceDelete
)

// traceOp is one replayed request: the key number its key maps to and the
// operation, decided in trace order.
type traceOp struct {
	number uint64
	op     OpType
}

// trace is the part of a trace file one run replays.
type trace struct {
	loaded []uint64  // key numbers of the bulk load, sorted
	ops    []traceOp // the warm-up lines, then the measured lines
	warmup int64     // how many of ops are the warm-up's
}

type traceKey struct {
	path              string
	load, warmup, ops int64
	order             InsertOrder
}

var traceCache sync.Map // traceKey -> *lazy[traceResult]

type traceResult struct {
	t   *trace
	err error
}

// loadTrace reads the lines of s's trace that the run replays, once per
// process and configuration.
func (s *Spec) loadTrace() (*trace, error) {
	path, err := filepath.Abs(s.TraceFile)
	if err != nil {
		return nil, fmt.Errorf("workloads: %s: %s=%s: %w", s.Source, PropTraceFile, s.TraceFile, err)
	}
	k := traceKey{path, s.RecordCount, s.WarmupOperationCount, s.OperationCount, s.InsertOrder}
	r := cached(&traceCache, k, func() traceResult {
		t, err := readTrace(path, k)
		return traceResult{t, err}
	})
	if r.err != nil {
		return nil, fmt.Errorf("workloads: %s: %w", s.Source, r.err)
	}
	return r.t, nil
}

// openTrace opens a trace file, decompressing it when it is zstd.
func openTrace(path string) (io.ReadCloser, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	br := bufio.NewReaderSize(f, 1<<20)
	if head, _ := br.Peek(len(zstdMagic)); bytes.Equal(head, zstdMagic) {
		d, err := zstd.NewReader(br, zstd.WithDecoderConcurrency(1))
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("zstd %s: %w", path, err)
		}
		return &zstdFile{d, f}, nil
	}
	return &plainFile{br, f}, nil
}

type zstdFile struct {
	d *zstd.Decoder
	f *os.File
}

func (z *zstdFile) Read(p []byte) (int, error) { return z.d.Read(p) }
func (z *zstdFile) Close() error               { z.d.Close(); return z.f.Close() }

type plainFile struct {
	r *bufio.Reader
	f *os.File
}

func (p *plainFile) Read(b []byte) (int, error) { return p.r.Read(b) }
func (p *plainFile) Close() error               { return p.f.Close() }

// readTrace reads the load, warm-up and measured lines of a trace and
// decides each request's operation in trace order.
func readTrace(path string, k traceKey) (*trace, error) {
	f, err := openTrace(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	need := k.load + k.warmup + k.ops
	keys := newTraceKeys(k.order)
	present := map[uint64]bool{}
	// The capacity is capped: a file may end long before the counts.
	t := &trace{warmup: k.warmup, ops: make([]traceOp, 0, min(k.warmup+k.ops, 1<<22))}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	line := int64(0)
	for line < need && sc.Scan() {
		line++
		key, kind, err := parseTraceLine(sc.Bytes())
		if err != nil {
			return nil, fmt.Errorf("trace %s line %d: %w", path, line, err)
		}
		n := keys.number(key)
		if line <= k.load {
			// The load lines leave every key they touch in the index but
			// those whose last request deletes them.
			present[n] = kind != traceDelete
			if line == k.load {
				t.loaded = presentKeys(present)
			}
			continue
		}
		op := Read
		switch kind {
		case traceWrite:
			op = Update
			if !present[n] {
				op = Insert
			}
			present[n] = true
		case traceDelete:
			op = Delete
			present[n] = false
		}
		t.ops = append(t.ops, traceOp{n, op})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("trace %s line %d: %w", path, line+1, err)
	}
	if line < need {
		return nil, fmt.Errorf("trace %s has %d lines; the run replays %d (recordcount %d to load, warmupoperationcount %d, operationcount %d)",
			path, line, need, k.load, k.warmup, k.ops)
	}
	return t, nil
}

// presentKeys lists the keys present holds, sorted.
func presentKeys(present map[uint64]bool) []uint64 {
	var keys []uint64
	for n, in := range present {
		if in {
			keys = append(keys, n)
		}
	}
	slices.Sort(keys)
	return keys
}

// parseTraceLine splits "timestamp,key,key size,value size,client
// id,operation,TTL". The anonymized key may itself hold commas, so the
// five fields after it are taken from the end of the line.
func parseTraceLine(line []byte) (key []byte, kind traceKind, err error) {
	first := bytes.IndexByte(line, ',')
	if first < 0 {
		return nil, 0, fmt.Errorf("%q: want timestamp,key,key size,value size,client id,operation,TTL", line)
	}
	end := len(line)
	var fields [5][]byte
	for i := 4; i >= 0; i-- {
		c := bytes.LastIndexByte(line[:end], ',')
		if c <= first {
			return nil, 0, fmt.Errorf("%q: want timestamp,key,key size,value size,client id,operation,TTL", line)
		}
		fields[i], end = line[c+1:end], c
	}
	key = line[first+1 : end]
	kind, ok := traceOps[string(fields[3])]
	if !ok {
		return nil, 0, fmt.Errorf("operation %q: want one of get, gets, set, add, replace, cas, append, prepend, delete, incr, decr", fields[3])
	}
	return key, kind, nil
}

// traceKeys maps the trace's keys to key numbers. Ordered keys number the
// distinct keys 1, 2, 3, ... in the order the trace first names them, so
// the index keys are dense; hashed keys take the 64-bit FNV-1a hash of the
// key string (0 and the all-ones number, which would make sentinel keys,
// move one step inward), so they scatter over the key space. Two strings
// with one hash are one key; among 10^8 keys the chance of that is below
// 10^-3.
type traceKeys struct {
	order   InsertOrder
	numbers map[string]uint64
}

func newTraceKeys(order InsertOrder) *traceKeys {
	return &traceKeys{order: order, numbers: map[string]uint64{}}
}

func (k *traceKeys) number(key []byte) uint64 {
	if k.order != Ordered {
		h := fnv.New64a()
		h.Write(key)
		return min(max(h.Sum64(), 1), math.MaxUint64-1)
	}
	if n, ok := k.numbers[string(key)]; ok {
		return n
	}
	n := uint64(len(k.numbers)) + 1
	k.numbers[string(key)] = n
	return n
}

// traceStream is one client's share of a trace: line j of the warm-up and
// of the measured lines goes to client j mod clients, so each client gets
// exactly its Share of either phase, in trace order.
type traceStream struct {
	ops  []traceOp
	next int
}

func newTraceStream(t *trace, c Client) *traceStream {
	ts := &traceStream{}
	pick := func(ops []traceOp) {
		for j := c.Index; j < len(ops); j += c.Total {
			ts.ops = append(ts.ops, ops[j])
		}
	}
	pick(t.ops[:t.warmup])
	pick(t.ops[t.warmup:])
	return ts
}

// take returns the client's next request. A client asked for more than
// its lines replays them from the start as reads: the state that decided
// their writes is gone by then.
func (ts *traceStream) take() traceOp {
	if len(ts.ops) == 0 {
		return traceOp{number: 1, op: Read}
	}
	o := ts.ops[ts.next%len(ts.ops)]
	if ts.next >= len(ts.ops) {
		o.op = Read
	}
	ts.next++
	return o
}

// checkTrace reports the properties a trace replay cannot honour.
func (s *Spec) checkTrace() []*PropertyError {
	if s.TraceFile == "" {
		return nil
	}
	var errs []*PropertyError
	if s.PartitionedKeys {
		errs = append(errs, &PropertyError{Source: s.Source, Property: PropPartitionedKeys, Value: "true",
			Want: "false with " + PropTraceFile + ": a trace's requests are split over clients by line, not by key range"})
	}
	if s.InsertOrder == Permuted {
		errs = append(errs, &PropertyError{Source: s.Source, Property: prop.InsertOrder, Value: string(Permuted),
			Want: "hashed or ordered with " + PropTraceFile + ": a trace names its own keys, so there are no record numbers to permute"})
	}
	if s.WarmupReadAll.On() {
		errs = append(errs, &PropertyError{Source: s.Source, Property: PropWarmupReadAll, Value: string(s.WarmupReadAll),
			Want: "false with " + PropTraceFile + ": the trace's load lines are the warm-up"})
	}
	return errs
}

// traceRecords enumerates a trace's bulk load in key order.
func (s *Spec) traceRecords(t *trace) func(yield func(key, value []byte) bool) {
	return func(yield func(key, value []byte) bool) {
		key := make([]byte, s.KeySize)
		value := make([]byte, s.ValueSize())
		for _, n := range t.loaded {
			s.InsertOrder.encode(key, n)
			splitmix.Fill(value, n^loadedValueSalt)
			if !yield(key, value) {
				return
			}
		}
	}
}

// LoadedRecords is how many records the bulk load holds: recordcount, or
// for a trace the distinct keys its load lines leave in the index.
func (s *Spec) LoadedRecords() (int64, error) {
	if s.TraceFile == "" {
		return s.RecordCount, nil
	}
	t, err := s.loadTrace()
	if err != nil {
		return 0, err
	}
	return int64(len(t.loaded)), nil
}

// TraceMissing says which trace file a spec needs and where to fetch it,
// when the file is not there; "" when the spec replays no trace or the
// file exists.
func (s *Spec) TraceMissing() string {
	if s.TraceFile == "" {
		return ""
	}
	if _, err := os.Stat(s.TraceFile); err == nil {
		return ""
	} else if !errors.Is(err, os.ErrNotExist) {
		return fmt.Sprintf("trace %s: %v", s.TraceFile, err)
	}
	name := filepath.Base(s.TraceFile)
	where := "the Twitter cache traces (github.com/twitter/cache-trace)"
	if url, ok := TraceFiles[name]; ok {
		where = url
	}
	return fmt.Sprintf("trace %s not found: fetch %s from %s (or generate a synthetic stand-in with scripts/gen-twitter-fixture) and give its folder with --trace-dir",
		s.TraceFile, name, strings.TrimSpace(where))
}
