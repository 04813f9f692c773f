package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/magiconair/properties"
	"github.com/pingcap/go-ycsb/pkg/ycsb"

	"github.com/dmbench/dmbench/bench"
	"github.com/dmbench/dmbench/indexes"
	_ "github.com/dmbench/dmbench/indexes/all" // every index becomes a DB
	"github.com/dmbench/dmbench/transport"
	"github.com/dmbench/dmbench/workloads"
)

// The operation types, as endpoint tags: verbs are attributed to the DB
// method that issued them. Tag 0 is left for verbs outside any operation.
const (
	tagRead transport.Tag = iota + 1
	tagUpdate
	tagInsert
	tagScan
	tagDelete
	numTags
)

// tagNames are go-ycsb's measurement names of the operation types.
var tagNames = [numTags]string{tagRead: "READ", tagUpdate: "UPDATE", tagInsert: "INSERT", tagScan: "SCAN", tagDelete: "DELETE"}

func init() {
	for _, name := range indexes.Names() {
		ycsb.RegisterDBCreator(name, creator{index: name, out: os.Stdout})
	}
}

// creator makes the DB of one index. The report goes to out after
// go-ycsb's own output, which measurement.Output writes to standard output.
type creator struct {
	index string
	out   io.Writer
}

func (c creator) Create(p *properties.Properties) (ycsb.DB, error) {
	return openDB(c.index, p, c.out)
}

// fabric is what the DB needs of its fabric: go-ycsb's threads attach
// endpoints of their own.
type fabric interface {
	transport.Fabric
	Attach(n transport.NodeID, thread int) (transport.Endpoint, func(), error)
}

// db is one dmbench index on a local or tcp fabric, as a go-ycsb DB.
type db struct {
	index  string
	opts   *options
	codec  codec
	fabric fabric
	idx    indexes.Index
	// attached says the index was there already: memory nodes of the tcp
	// fabric held it, published by an earlier go-ycsb process. Otherwise,
	// on tcp, this process built it and publishes it once loaded.
	attached  bool
	published bool
	computes  []transport.NodeID
	out       io.Writer

	mu       sync.Mutex
	ops      [numTags]uint64 // operations of the threads cleaned up since the last reset
	failed   [numTags]uint64 // of which failed (go-ycsb's READ_ERROR, UPDATE_ERROR, ...)
	threads  int             // threads ever initialised: Close reports only if one ran
	baseline indexes.Info    // Info at the last reset, for the cache hit ratio
}

// thread is the state of one go-ycsb thread: its endpoint, its index
// client and buffers for one key and one value.
type thread struct {
	ep     transport.Endpoint
	client indexes.Client
	detach func()
	key    []byte
	val    []byte
	ops    [numTags]uint64
	failed [numTags]uint64
}

type threadKey struct{}

// openDB builds the fabric and the index the properties describe.
func openDB(index string, p *properties.Properties, out io.Writer) (*db, error) {
	o, err := parseOptions(index, p)
	if err != nil {
		return nil, fmt.Errorf("db %s: %w", index, err)
	}
	// The workload spec only tells the runner the data's shape and how
	// much memory to reserve; go-ycsb's core workload drives the run.
	shape, err := workloads.FromProperties("the go-ycsb properties", workloads.Properties{
		"recordcount": fmt.Sprint(o.records), "operationcount": fmt.Sprint(o.operations),
		"readproportion": "0", "updateproportion": "0", "insertproportion": "1",
		"fieldcount": "1", "fieldlength": fmt.Sprint(o.valueSize), "keysize": fmt.Sprint(o.keySize),
	}, nil)
	if err != nil {
		return nil, fmt.Errorf("db %s: %w", index, err)
	}
	cfg := bench.Config{
		Fabric: o.fabric, ComputeNodes: o.computeNodes, MemoryNodes: o.memoryNodes,
		Threads: o.threads, Coroutines: 1, MemoryCores: o.memoryCores, ComputeCores: 1,
		CacheBytes: o.cacheBytes, Mode: o.mode, Seed: o.seed,
		Index: index, Params: o.params, Workload: shape,
	}
	var (
		f     transport.Fabric
		idx   indexes.Index
		built = true
	)
	if o.fabric == "tcp" {
		cfg.MemNodes = o.memNodes
		if cfg.ClusterKey, err = os.ReadFile(o.keyFile); err != nil {
			return nil, fmt.Errorf("db %s: property dm.key: %w", index, err)
		}
		// The memory nodes keep what an earlier go-ycsb load put there,
		// when its cluster and index are the same.
		f, idx, built, err = bench.Open(&cfg)
	} else {
		f, idx, err = bench.Build(&cfg)
	}
	if err != nil {
		return nil, fmt.Errorf("db %s: %w", index, err)
	}
	// A built index starts empty (the conformance suite holds every index
	// to working without a bulk load); dm.preload=bulk bulk-loads it once.
	ff := f.(fabric) // local and tcp fabrics attach threads
	return &db{
		index: index, opts: o, fabric: ff, idx: idx, computes: ff.Config().ComputeNodeIDs(), out: out, attached: !built,
		codec:    codec{keySize: o.keySize, valueSize: o.valueSize, fieldCount: o.fieldCount, fieldLength: o.fieldLength},
		baseline: idx.Info(),
	}, nil
}

// InitThread attaches an endpoint for go-ycsb thread threadID: threads go
// round-robin over the compute nodes, then over each node's fabric threads.
func (d *db) InitThread(ctx context.Context, threadID, _ int) context.Context {
	n := len(d.computes)
	ep, detach, err := d.fabric.Attach(d.computes[threadID%n], threadID/n%d.opts.threads)
	if err != nil {
		panic(fmt.Sprintf("go-ycsb: thread %d maps outside the cluster, a bug: %v", threadID, err))
	}
	d.mu.Lock()
	d.threads++
	d.mu.Unlock()
	t := &thread{ep: ep, client: d.idx.NewClient(ep), detach: detach,
		key: make([]byte, d.opts.keySize), val: make([]byte, d.opts.valueSize)}
	return context.WithValue(ctx, threadKey{}, t)
}

// CleanupThread detaches the thread's endpoint, which hands its verb
// counters to the fabric's Stats.
func (d *db) CleanupThread(ctx context.Context) {
	t := d.thread(ctx)
	t.ep.SetTag(0)
	t.detach()
	d.mu.Lock()
	defer d.mu.Unlock()
	for i := range t.ops {
		d.ops[i] += t.ops[i]
		d.failed[i] += t.failed[i]
	}
}

func (d *db) thread(ctx context.Context) *thread {
	t, ok := ctx.Value(threadKey{}).(*thread)
	if !ok {
		panic("go-ycsb: a DB call on a context InitThread did not make")
	}
	return t
}

// begin encodes key for an operation of type tag and attributes what
// follows to it.
func (d *db) begin(ctx context.Context, tag transport.Tag, key string) (*thread, error) {
	t := d.thread(ctx)
	if err := d.codec.key(t.key, key); err != nil {
		return nil, fmt.Errorf("%s %s: %w", d.index, tagNames[tag], err)
	}
	t.ep.SetTag(tag)
	t.ops[tag]++
	return t, nil
}

// Read returns the fields of key; an absent key is an error, which go-ycsb
// counts as READ_ERROR.
func (d *db) Read(ctx context.Context, _ string, key string, fields []string) (map[string][]byte, error) {
	t, err := d.begin(ctx, tagRead, key)
	if err != nil {
		return nil, err
	}
	val, found, err := t.client.Search(t.key)
	if err == nil && !found {
		err = indexes.ErrNotFound
	}
	if err != nil {
		t.failed[tagRead]++
		return nil, fmt.Errorf("%s READ %q: %w", d.index, key, err)
	}
	return d.codec.fields(val, fields), nil
}

// Scan returns the fields of up to count records from startKey on, in key
// order.
func (d *db) Scan(ctx context.Context, _ string, startKey string, count int, fields []string) ([]map[string][]byte, error) {
	t, err := d.begin(ctx, tagScan, startKey)
	if err != nil {
		return nil, err
	}
	rows := make([]map[string][]byte, 0, min(count, 1024))
	err = t.client.Scan(t.key, count, func(_, val []byte) bool {
		rows = append(rows, d.codec.fields(val, fields))
		return true
	})
	if err != nil {
		t.failed[tagScan]++
		return nil, fmt.Errorf("%s SCAN %d from %q: %w", d.index, count, startKey, err)
	}
	return rows, nil
}

// Update replaces the value of key with the one values encode: it is one
// index update, so fields values does not carry read back as absent.
func (d *db) Update(ctx context.Context, _ string, key string, values map[string][]byte) error {
	return d.write(ctx, tagUpdate, key, values, indexes.Client.Update)
}

// Insert adds key, or replaces its value if present (the indexes upsert).
func (d *db) Insert(ctx context.Context, _ string, key string, values map[string][]byte) error {
	return d.write(ctx, tagInsert, key, values, indexes.Client.Insert)
}

func (d *db) write(ctx context.Context, tag transport.Tag, key string, values map[string][]byte, op func(indexes.Client, []byte, []byte) error) error {
	t := d.thread(ctx)
	// Encode the value before begin so a bad field costs no operation.
	if err := d.codec.value(t.val, values); err != nil {
		return fmt.Errorf("%s %s %q: %w", d.index, tagNames[tag], key, err)
	}
	if _, err := d.begin(ctx, tag, key); err != nil {
		return err
	}
	if err := op(t.client, t.key, t.val); err != nil {
		t.failed[tag]++
		return fmt.Errorf("%s %s %q: %w", d.index, tagNames[tag], key, err)
	}
	return nil
}

// Delete removes key; an absent key is an error.
func (d *db) Delete(ctx context.Context, _ string, key string) error {
	t, err := d.begin(ctx, tagDelete, key)
	if err != nil {
		return err
	}
	if err := t.client.Delete(t.key); err != nil {
		t.failed[tagDelete]++
		return fmt.Errorf("%s DELETE %q: %w", d.index, key, err)
	}
	return nil
}

// resetStats forgets what the threads cleaned up so far did, so that the
// report covers what follows (a run after its preload). Every thread must
// have been cleaned up.
func (d *db) resetStats() {
	d.fabric.ResetStats()
	d.mu.Lock()
	defer d.mu.Unlock()
	d.ops = [numTags]uint64{}
	d.failed = [numTags]uint64{}
	d.baseline = d.idx.Info()
}

// publish, on the tcp fabric, marks the index this process built as
// loaded, so that later go-ycsb processes attach to it.
func (d *db) publish() error {
	if d.opts.fabric != "tcp" || d.attached || d.published {
		return nil
	}
	d.published = true
	if err := bench.Publish(d.fabric); err != nil {
		return fmt.Errorf("db %s: %w", d.index, err)
	}
	return nil
}

// Close prints dmbench's view of the run, if a thread ran, publishes what
// it built on tcp, and releases the fabric.
func (d *db) Close() error {
	d.mu.Lock()
	ran := d.threads > 0
	d.mu.Unlock()
	var err error
	if ran {
		err = d.report(d.out)
	}
	return errors.Join(err, d.publish(), d.fabric.Close())
}
