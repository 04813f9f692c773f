package main

import (
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"

	"github.com/dustin/go-humanize"
	"github.com/magiconair/properties"
	"github.com/pingcap/go-ycsb/pkg/prop"

	"github.com/dmbench/dmbench/bench"
	"github.com/dmbench/dmbench/indexes"
	"github.com/dmbench/dmbench/transport"
)

// Defaults of the dm.* properties that do not follow from go-ycsb's.
const (
	defaultKeySize = 24 // go-ycsb's "user" + up to 19 digits fits, as in DMTree's setup
	// maxDefaultValueSize caps the value a record gets unless dm.valuesize
	// says otherwise: the papers store 8-byte values (a pointer to the
	// record) and go up to 128-byte key-value pairs (DMTree Figure 18), so
	// go-ycsb's stock 10 x 100-byte records would measure copying, not the
	// index.
	maxDefaultValueSize = 64
	// Bounds of what the workloads package accepts for dmbench's own runs.
	minKeySize   = 8
	maxKeySize   = 256
	maxValueSize = 1 << 20
	paramPrefix  = "dm.param."
)

// options are the DB's settings: the dm.* properties and the go-ycsb
// properties the key and value encoding depends on.
type options struct {
	fabric       string   // local or tcp
	memNodes     []string // tcp: the memory nodes' host:port, in node-id order
	keyFile      string   // tcp: the cluster key file
	computeNodes int
	threads      int // fabric threads per compute node
	memoryNodes  int
	memoryCores  int
	cacheBytes   uint64
	mode         transport.Mode
	seed         uint64
	keySize      int
	valueSize    int
	preload      string // how a run or shell starts: bulk, insert or none
	params       map[string]string

	fieldCount  int
	fieldLength int
	records     int64 // recordcount, to size the memory nodes
	operations  int64 // operationcount, likewise
}

// dmProperty is one dm.* property: what it accepts and how it sets options.
type dmProperty struct {
	name string
	want string
	set  func(o *options, v string) bool
}

// dmProperties are the dm.* properties, in the order the usage lists them.
// dm.param.<name> is handled apart, as its names come from the index.
var dmProperties = []dmProperty{
	{"dm.fabric", "local or tcp (the sim fabric runs its clients as coroutines in virtual time and cannot serve go-ycsb's own goroutines: use `dmbench run --fabric sim` for it)",
		func(o *options, v string) bool { o.fabric = v; return v == "local" || v == "tcp" }},
	{"dm.memnodes", "host:port,... of running memory nodes (dmbench memnode), one per memory node, in node-id order", func(o *options, v string) bool {
		o.memNodes = strings.Split(v, ",")
		for _, a := range o.memNodes {
			if _, _, err := net.SplitHostPort(a); err != nil {
				return false
			}
		}
		return true
	}},
	{"dm.key", "the file holding the cluster key the memory nodes were started with", func(o *options, v string) bool {
		o.keyFile = v
		return v != ""
	}},
	{"dm.compute-nodes", "a positive integer", func(o *options, v string) bool { return positive(v, &o.computeNodes) }},
	{"dm.threads", "a positive integer (fabric threads per compute node)", func(o *options, v string) bool { return positive(v, &o.threads) }},
	{"dm.memory-nodes", "a positive integer", func(o *options, v string) bool { return positive(v, &o.memoryNodes) }},
	{"dm.memory-cores", "a positive integer (RPC cores per memory node)", func(o *options, v string) bool { return positive(v, &o.memoryCores) }},
	{"dm.cache-bytes", "a byte size such as 0, 4096, 256MiB (2^20 bytes each) or 1GB (10^9 bytes each) (compute-side cache per compute node)", func(o *options, v string) bool {
		return parsed(humanize.ParseBytes, v, &o.cacheBytes)
	}},
	{"dm.mode", "paper or strict", func(o *options, v string) bool { return parsed(transport.ParseMode, v, &o.mode) }},
	{"dm.seed", "an unsigned integer", func(o *options, v string) bool {
		return parsed(func(v string) (uint64, error) { return strconv.ParseUint(v, 10, 64) }, v, &o.seed)
	}},
	{"dm.keysize", fmt.Sprintf("an integer from %d to %d (bytes per key)", minKeySize, maxKeySize), func(o *options, v string) bool {
		return within(v, minKeySize, maxKeySize, &o.keySize)
	}},
	{"dm.valuesize", fmt.Sprintf("an integer from 1 to %d (bytes per value)", maxValueSize), func(o *options, v string) bool {
		return within(v, 1, maxValueSize, &o.valueSize)
	}},
	{"dm.preload", "bulk, insert or none (how run and shell load go-ycsb's records first)", func(o *options, v string) bool {
		return parsed(func(v string) (string, error) {
			if !slices.Contains([]string{"bulk", "insert", "none"}, v) {
				return "", strconv.ErrSyntax
			}
			return v, nil
		}, v, &o.preload)
	}},
}

// parsed stores parse(v) in dst and reports whether it succeeded; a
// failure leaves dst at its default, so that later checks see sane values.
func parsed[T any](parse func(string) (T, error), v string, dst *T) bool {
	x, err := parse(v)
	if err == nil {
		*dst = x
	}
	return err == nil
}

func positive(v string, dst *int) bool { return within(v, 1, 1<<30, dst) }

func within(v string, lo, hi int, dst *int) bool {
	return parsed(func(v string) (int, error) {
		n, err := strconv.Atoi(v)
		if err == nil && (n < lo || n > hi) {
			err = strconv.ErrRange
		}
		return n, err
	}, v, dst)
}

// intProperty reads a go-ycsb integer property strictly: go-ycsb's own
// getters fall back to the default on a malformed value, which would size
// the cluster or the values from a number nobody wrote.
func intProperty(p *properties.Properties, name string, def, lo, hi int64) (int64, error) {
	v, ok := p.Get(name)
	if !ok {
		return def, nil
	}
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil || n < lo || n > hi {
		return 0, fmt.Errorf("property %s=%q: want an integer from %d to %d", name, v, lo, hi)
	}
	return n, nil
}

// parseOptions reads the DB's settings from the properties of a run of
// index. Every bad property is reported, each naming itself and what it
// accepts.
func parseOptions(index string, p *properties.Properties) (*options, error) {
	d := bench.Default()
	o := &options{
		fabric: "local", computeNodes: 1, memoryNodes: 1, memoryCores: 1,
		cacheBytes: d.CacheBytes, mode: transport.ModePaper, seed: d.Seed,
		keySize: defaultKeySize, params: map[string]string{}, preload: "none",
	}
	integrity := p.GetBool(prop.DataIntegrity, prop.DataIntegrityDefault)
	if p.GetString(prop.Command, "") == "run" {
		// A run in a fresh process finds an empty index: the local
		// fabric lives only as long as the process. Only go-ycsb's own
		// inserts make the values dataintegrity checks.
		o.preload = "bulk"
		if integrity {
			o.preload = "insert"
		}
	}
	var errs []error
	threads, err := intProperty(p, prop.ThreadCount, 1, 1, 1<<20)
	errs = append(errs, err)
	fieldCount, err := intProperty(p, prop.FieldCount, prop.FieldCountDefault, 1, maxValueSize)
	errs = append(errs, err)
	fieldLength, err := intProperty(p, prop.FieldLength, prop.FieldLengthDefault, 1, maxValueSize)
	errs = append(errs, err)
	o.records, err = intProperty(p, prop.RecordCount, prop.RecordCountDefault, 0, 1<<48)
	errs = append(errs, err)
	o.operations, err = intProperty(p, prop.OperationCount, 0, 0, 1<<48)
	errs = append(errs, err)
	o.fieldCount, o.fieldLength = int(fieldCount), int(fieldLength)
	o.valueSize = max(1, min(o.fieldCount*o.fieldLength, maxDefaultValueSize))

	set := map[string]bool{}
	for _, k := range p.Keys() {
		if !strings.HasPrefix(k, "dm.") {
			continue
		}
		v, _ := p.Get(k)
		if name, ok := strings.CutPrefix(k, paramPrefix); ok {
			o.params[name] = v
			continue
		}
		i := slices.IndexFunc(dmProperties, func(d dmProperty) bool { return d.name == k })
		if i < 0 {
			errs = append(errs, fmt.Errorf("unknown property %s: the dm.* properties are %s and %s<name>", k, dmNames(), paramPrefix))
			continue
		}
		if !dmProperties[i].set(o, strings.TrimSpace(v)) {
			errs = append(errs, fmt.Errorf("property %s=%q: want %s", k, v, dmProperties[i].want))
		}
		set[k] = true
	}
	switch {
	case o.fabric == "tcp" && (len(o.memNodes) == 0 || o.keyFile == ""):
		errs = append(errs, errors.New("property dm.fabric=tcp: want the running memory nodes in dm.memnodes=host:port,... and their cluster key file in dm.key"))
	case o.fabric == "local" && (len(o.memNodes) > 0 || o.keyFile != ""):
		errs = append(errs, errors.New("properties dm.memnodes and dm.key: they name memory nodes of the tcp fabric; want dm.fabric=tcp with them"))
	case o.fabric == "tcp" && !set["dm.memory-nodes"]:
		o.memoryNodes = len(o.memNodes)
	}
	if !set["dm.threads"] && threads > 0 { // 0: threadcount was bad, and reported
		// One fabric thread per go-ycsb thread, as far as they go round.
		o.threads = int((threads + int64(o.computeNodes) - 1) / int64(o.computeNodes))
	}
	// Keys come from go-ycsb's workload in load, run and a preload; in a
	// shell without one they are typed, and checked one by one.
	if n := longestKey(p, o); n > o.keySize && (p.GetString(prop.Command, "") != "" || o.preload != "none") {
		errs = append(errs, fmt.Errorf("property dm.keysize=%d: go-ycsb's keys here reach %d bytes (keyprefix, zeropadding and insertorder decide), so want at least %d",
			o.keySize, n, n))
	}
	if integrity && o.valueSize < o.fieldCount*o.fieldLength {
		errs = append(errs, fmt.Errorf("property dm.valuesize=%d: dataintegrity=true checks every field whole, so want at least fieldcount*fieldlength = %d",
			o.valueSize, o.fieldCount*o.fieldLength))
	}
	if integrity && o.preload == "bulk" {
		errs = append(errs, errors.New("property dm.preload=bulk: dataintegrity=true checks the values go-ycsb's own inserts make, so want insert"))
	}
	if spec, err := indexes.Lookup(index); err != nil {
		errs = append(errs, err)
	} else if _, err := spec.Resolve(o.params); err != nil {
		errs = append(errs, fmt.Errorf("properties %s*: %w", paramPrefix, err))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return o, nil
}

// longestKey is the length of the longest key go-ycsb's core workload
// makes: its prefix and a key number zero-padded to zeropadding digits, the
// number an FNV-1a hash (at most 19 digits) unless insertorder=ordered.
func longestKey(p *properties.Properties, o *options) int {
	digits := 19
	if p.GetString(prop.InsertOrder, prop.InsertOrderDefault) != "hashed" {
		digits = len(strconv.FormatInt(o.records+o.operations, 10))
	}
	pad := p.GetInt64(prop.ZeroPadding, prop.ZeroPaddingDefault)
	return len(p.GetString(prop.KeyPrefix, prop.KeyPrefixDefault)) + int(max(int64(digits), min(pad, maxKeySize)))
}

func dmNames() string {
	names := make([]string, len(dmProperties))
	for i, d := range dmProperties {
		names[i] = d.name
	}
	return strings.Join(names, ", ")
}
