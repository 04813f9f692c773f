package bench

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dmbench/dmbench/indexes"
	"github.com/dmbench/dmbench/indexes/combine"
	"github.com/dmbench/dmbench/transport"
	"github.com/dmbench/dmbench/transport/local"
	"github.com/dmbench/dmbench/transport/sim"
	"github.com/dmbench/dmbench/transport/tcp"
	"github.com/dmbench/dmbench/transport/verbs"
	"github.com/dmbench/dmbench/workloads"
)

// Build makes the fabric and the index of a run, without loading or
// running anything. The caller closes the fabric.
func Build(c *Config) (transport.Fabric, indexes.Index, error) {
	if err := c.Validate(); err != nil {
		return nil, nil, err
	}
	f, err := c.fabric(tcp.Options{MemNodes: c.MemNodes, Key: c.ClusterKey})
	if err != nil {
		return nil, nil, err
	}
	idx, err := c.index(f, false, nil)
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, idx, nil
}

// fabric makes the run's fabric; opt places the tcp fabric's nodes.
func (c *Config) fabric(opt tcp.Options) (transport.Fabric, error) {
	tc, err := c.cluster()
	if err != nil {
		return nil, err
	}
	var f transport.Fabric
	switch c.Fabric {
	case "sim":
		p, _ := sim.LookupProfile(c.Profile) // validated
		f, err = sim.New(tc, p)
	case "local":
		f, err = local.New(tc)
	case "tcp":
		f, err = tcp.New(tc, opt)
	case "verbs":
		vopt := verbs.Options{TCP: opt}
		if c.Verbs != nil {
			vopt.HCA = *c.Verbs
		}
		f, err = verbs.New(tc, vopt)
	}
	if err != nil {
		return nil, fmt.Errorf("build %s fabric: %w", c.Fabric, err)
	}
	return f, nil
}

// index builds the run's index on f, or attaches to the one another
// compute node built (indexes.Env.Attach), to serve the compute nodes
// compute (nil: all).
func (c *Config) index(f transport.Fabric, attach bool, compute []transport.NodeID) (indexes.Index, error) {
	loaded, err := c.Workload.LoadedRecords()
	if err != nil {
		return nil, err
	}
	env := indexes.Env{Fabric: f, KeySize: c.Workload.KeySize, ValueSize: c.Workload.ValueSize(), CacheBytes: c.CacheBytes,
		Records: uint64(loaded), Attach: attach, Compute: compute}
	if c.Workload.PartitionedKeys {
		parts, err := c.partitions()
		if err != nil {
			return nil, err
		}
		for _, p := range parts {
			env.Partitions = append(env.Partitions, p.Start)
		}
	}
	spec, _ := indexes.Lookup(c.Index) // validated
	idx, err := spec.Build(env, c.Params)
	if err != nil {
		return nil, err
	}
	if _, ok := idx.(indexes.Repartitioner); c.Repartition != nil && !ok {
		return nil, fmt.Errorf("index %s cannot repartition its compute nodes' keys: choose one of %s", c.Index, strings.Join(repartitioners(), ", "))
	}
	return idx, nil
}

// partitions are the key ranges of the compute nodes that own keys from
// the start: all of them, or all but the spare of a repartitioning.
func (c *Config) partitions() ([]workloads.KeyRange, error) {
	owners := c.ComputeNodes
	if c.Repartition != nil {
		owners--
	}
	return c.Workload.Partitions(owners)
}

// repartitioners lists the registered indexes that can repartition, for
// the message of a run that asks another one to.
func repartitioners() []string {
	var names []string
	for _, name := range indexes.Names() {
		if s, _ := indexes.Lookup(name); s.Repartitions {
			names = append(names, name)
		}
	}
	return names
}

// Run performs one run and returns its result. With c.Process, this
// process runs one compute node of the run, and the result is the whole
// run's, merged from every compute node's.
func Run(c Config) (*Result, error) {
	return RunWarm(c, nil)
}

// RunWarm is Run lending and borrowing per-node warm-ups through w (nil:
// none): a run that warms up as one before it did copies that run's
// caches, which gives the same result as searching every record.
func RunWarm(c Config, w *Warm) (*Result, error) {
	if c.Process != nil {
		return runProcess(c)
	}
	f, idx, err := Build(&c)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := &runner{cfg: c, f: f, idx: idx, warm: w}
	return r.run()
}

// runner holds one run's state.
type runner struct {
	// combined are a Combiner's round sizes before the measured phase.
	combined [2]combine.Sizes
	cfg      Config
	f        transport.Fabric
	idx      indexes.Index
	clients  []workloads.Client
	streams  []*workloads.Stream

	// parts are the compute nodes' key ranges with partitioned keys (the
	// spare of a repartitioning has none); ranges[n] is where node n's
	// clients draw keys from now, replaced by a repartitioning.
	parts  []workloads.KeyRange
	ranges []atomic.Pointer[workloads.KeyRange]
	// spare holds the spare's clients back until it owns keys.
	spare transport.Gate
	// start is when the measured phase began (ns on the fabric's clock),
	// -1 before; changes are what the runner did to the cluster in it.
	start   atomic.Int64
	changes []Change

	// warm lends and keeps per-node warm-ups (nil: none); key and digest
	// are the run's warm-up key and the digest of its bulk load's memory,
	// set when its warm-up can be lent.
	warm   *Warm
	key    string
	digest uint64

	mu         sync.Mutex // guards failure on the local fabric
	failure    error
	loadWall   time.Duration
	warmupWall time.Duration

	// proc, in a compute-node process, is its rendezvous and position:
	// the runner runs only that compute node's clients and meets the
	// other processes before every phase. nil in a one-process run.
	proc *member
	// stopped, in a compute-node process, ends its clients' loops: the
	// run was aborted by another.
	stopped atomic.Bool
}

func (r *runner) run() (*Result, error) {
	c := &r.cfg
	w := c.Workload
	start := time.Now()
	records, err := w.Records()
	if err != nil {
		return nil, err
	}
	if r.proc == nil {
		loader := r.f.Setup(r.f.Config().ComputeNodeIDs()[0])
		if err := r.idx.BulkLoad(loader, records); err != nil {
			loaded, _ := w.LoadedRecords() // read before, by Records
			return nil, fmt.Errorf("bulk load of %d records into %s: %w", loaded, c.Index, err)
		}
		r.startWarm()
		r.loadWall = time.Since(start)
	}

	r.clients, err = workloads.Cluster(c.ComputeNodes, c.Threads*c.Coroutines)
	if err != nil {
		return nil, err
	}
	if w.PartitionedKeys {
		if r.parts, err = c.partitions(); err != nil {
			return nil, err
		}
		r.ranges = make([]atomic.Pointer[workloads.KeyRange], c.ComputeNodes)
		for n := range r.parts {
			r.ranges[n].Store(&r.parts[n])
		}
	}
	for _, cl := range r.clients {
		st, err := w.Stream(cl)
		if err != nil {
			return nil, err
		}
		if cl.Node < len(r.parts) && c.Repartition != nil {
			if err := st.SetPartition(r.parts[cl.Node]); err != nil {
				return nil, err
			}
		}
		r.streams = append(r.streams, st)
	}

	warmup := time.Now()
	if w.WarmupReadAll.On() {
		if err := r.readAll(); err != nil {
			return nil, fmt.Errorf("warm-up read of every record: %w", err)
		}
	}
	if w.WarmupOperationCount > 0 {
		if _, err := r.phase(w.WarmupOperationCount, 0, false); err != nil {
			return nil, fmt.Errorf("warm-up: %w", err)
		}
	}
	r.warmupWall = time.Since(warmup)
	before := r.idx.Info()
	if cb, ok := r.idx.(indexes.Combiner); ok {
		r.combined[0], r.combined[1] = cb.CombiningSizes()
	}
	// Counters are reset before the compute-node processes meet to start
	// measuring: once one starts, it calls the others' handlers, whose
	// counters must not be reset under them. The window so includes the
	// wait at the barrier.
	r.f.ResetStats()
	if err := r.proc.barrier("measure"); err != nil {
		return nil, err
	}
	wall := time.Now()
	rec, err := r.phase(w.OperationCount, c.MaxPhaseNs, true)
	if err != nil {
		return nil, fmt.Errorf("measured phase: %w", err)
	}
	if r.proc != nil {
		took := time.Since(wall)
		// The other compute nodes' clients may still call this one's
		// handlers: its counters are read once every client has ended.
		if err := r.proc.barrier("measured"); err != nil {
			return nil, err
		}
		return r.merged(rec, took, before)
	}
	return r.result(rec, time.Since(wall), before)
}

// phase runs ops operations split over every client and returns their
// latencies. With a cap, clients stop issuing once cap ns have passed.
// The measured phase records the timeline and carries out the
// repartitioning; in a warm-up the spare of a repartitioning stays idle.
func (r *runner) phase(ops int64, cap int64, measured bool) (*recorder, error) {
	c := &r.cfg
	shared := c.Fabric == "sim" // one coroutine runs at a time
	window := int64(0)
	if measured {
		window = c.TimelineNs
	}
	var all *recorder
	var own []*recorder
	if shared {
		all = newRecorder(window)
	}
	r.start.Store(-1)
	ids := r.f.Config().ComputeNodeIDs()
	spare := -1
	if c.Repartition != nil {
		spare = len(ids) - 1
		if measured {
			r.f.Go(ids[c.Repartition.From], 0, r.repartition)
		}
	}
	for i, cl := range r.clients {
		if cl.Node == spare && !measured || !r.proc.runs(cl.Node) {
			continue
		}
		rec := all
		if !shared {
			rec = newRecorder(window)
			own = append(own, rec)
		}
		th := (i / c.Coroutines) % c.Threads
		r.f.Go(ids[cl.Node], th, r.body(cl.Node, r.streams[i], cl.Share(ops), cap, rec, cl.Node == spare))
	}
	if err := r.f.Run(); err != nil {
		return nil, err
	}
	if err := r.failure; err != nil {
		return nil, err
	}
	if !measured {
		if err := r.proc.barrier("warm-up"); err != nil {
			return nil, err
		}
	}
	if !shared {
		all = newRecorder(window)
		for _, rec := range own {
			all.merge(rec)
		}
	}
	return all, nil
}

// began marks the start of the phase at now unless a client already did,
// and returns it.
func (r *runner) began(now int64) int64 {
	r.start.CompareAndSwap(-1, now)
	return r.start.Load()
}

// readAll searches every loaded record, unmeasured, as DMTree's
// evaluation warms its caches (section 5.1).
//
// Read on every node (pernode), each compute node in turn has one client
// search every record (with partitioned keys, the records of its own
// partition) through a setup endpoint, outside virtual time; an index that
// caches nothing (indexes.Uncached) would be left as it was, so it reads
// nothing, and one that can copy what a node learned (indexes.CacheCopier)
// has the first node search and the others copy it. The artifact
// runs 72 threads per server, each over its own run of records; what a
// server's caches hold afterwards does not depend on which thread read a
// record (DMTree's Figure 11 at small scale gave the same claims and
// throughputs within 0.3% with the node's clients reading in virtual
// time), and those would cost the simulator four times as much.
//
// Read once in the cluster, record r goes to client r mod clients, with
// partitioned keys to the node's client r mod its clients, in virtual
// time.
func (r *runner) readAll() error {
	c := &r.cfg
	w := c.Workload
	parts := r.parts
	ids := r.f.Config().ComputeNodeIDs()
	perNode := c.Threads * c.Coroutines
	if w.WarmupReadAll == workloads.ReadAllPerNode {
		if err := r.searchPerNode(); err != nil {
			return err
		}
		return r.proc.barrier("read-all")
	}
	for i, cl := range r.clients {
		stride, first := int64(cl.Total), int64(cl.Index)
		if parts != nil {
			if cl.Node >= len(parts) {
				continue // the spare, as above
			}
			stride, first = int64(perNode), int64(cl.Index%perNode)
		}
		if !r.proc.runs(cl.Node) {
			continue
		}
		th := (i / c.Coroutines) % c.Threads
		r.f.Go(ids[cl.Node], th, func(ep transport.Endpoint) {
			idx := r.idx.NewClient(ep)
			for rec := first; rec < w.RecordCount; rec += stride {
				key := w.Key(rec)
				if parts != nil && !parts[cl.Node].Contains(key) {
					continue
				}
				if _, _, err := idx.Search(key); err != nil {
					r.fail(fmt.Errorf("%s warm-up search of key %x: %w", c.Index, key, err))
					return
				}
			}
		})
	}
	if err := r.f.Run(); err != nil {
		return err
	}
	if r.failure != nil {
		return r.failure
	}
	return r.proc.barrier("read-all")
}

// searchPerNode has every compute node search every loaded record outside
// virtual time, or copy the caches such searches leave (by another of
// this run's compute nodes, or by another run through r.warm) where the
// index copies exactly.
func (r *runner) searchPerNode() (err error) {
	c := &r.cfg
	w := c.Workload
	parts := r.parts
	if u, ok := r.idx.(indexes.Uncached); ok && u.Uncached() {
		return nil // the searches would change nothing
	}
	copier, _ := r.idx.(indexes.CacheCopier)
	if parts != nil || r.cfg.searchEveryNode {
		// With partitioned keys each node reads only its own
		// partition: no node's searches are another's.
		copier = nil
	}
	var tpl *template // another run's warm-up, to copy from
	if copier != nil && r.key != "" {
		if tpl = r.warm.lend(r.key, r.digest); tpl != nil {
			defer func() { err = errors.Join(err, r.warm.giveBack(tpl)) }()
		}
	}
	var searched transport.NodeID // the node that searched, when warm
	warm := false
	for n, id := range r.f.Config().ComputeNodeIDs() {
		if parts != nil && n >= len(parts) || !r.proc.runs(n) {
			continue // a spare reads nothing: it owns no keys yet
		}
		if copier != nil {
			copied, err := r.copyCaches(copier, tpl, searched, warm, id)
			if err != nil {
				return fmt.Errorf("%s warm-up: copy caches to compute node %d: %w", c.Index, id, err)
			}
			if copied {
				continue
			}
		}
		idx := r.idx.NewClient(r.f.Setup(id))
		for rec := range w.RecordCount {
			key := w.Key(rec)
			if parts != nil && !parts[n].Contains(key) {
				continue
			}
			if _, _, err := idx.Search(key); err != nil {
				return fmt.Errorf("%s warm-up search of key %x on compute node %d: %w", c.Index, key, n, err)
			}
		}
		searched, warm = id, true
	}
	if tpl == nil && warm && copier != nil && r.key != "" {
		if err := r.keepTemplate(searched); err != nil {
			return fmt.Errorf("%s warm-up: keep compute node %d's caches for the runs to come: %w", c.Index, searched, err)
		}
	}
	return nil
}

// body is one client's loop over its share of a phase. A spare's client
// waits until a repartitioning gives its node keys; every client follows
// its node's key range as repartitionings move it.
func (r *runner) body(node int, st *workloads.Stream, ops, cap int64, rec *recorder, spare bool) func(transport.Endpoint) {
	return func(ep transport.Endpoint) {
		start := r.began(ep.Now())
		if spare {
			r.spare.Wait(ep)
		}
		var cur *workloads.KeyRange
		if r.ranges != nil {
			if cur = r.ranges[node].Load(); cur == nil {
				return // the repartitioning failed; the run reports why
			}
		}
		cl := r.idx.NewClient(ep)
		for range ops {
			if cap > 0 && ep.Now()-start >= cap || r.stopped.Load() {
				break
			}
			if r.ranges != nil {
				if p := r.ranges[node].Load(); p != cur {
					if err := st.SetPartition(*p); err != nil {
						r.fail(fmt.Errorf("compute node %d after repartitioning: %w", node, err))
						return
					}
					cur = p
				}
			}
			op := st.Next()
			ep.SetTag(transport.Tag(op.Type) + 1)
			t0 := ep.Now()
			missed, err := apply(cl, op)
			end := ep.Now()
			rec.record(op.Type, end-t0, missed)
			rec.tick(end - start)
			if err != nil {
				r.fail(fmt.Errorf("%s %s of key %x: %w", r.cfg.Index, op.Type, op.Key, err))
				return
			}
		}
		ep.SetTag(0)
	}
}

func (r *runner) fail(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failure = errors.Join(r.failure, err)
}

// apply performs one operation. missed reports an operation that found no
// key where the workload expects one (a read, update or delete of a loaded
// key; with a trace, also a request that raced its key's insert or
// delete): counted as failed, as go-ycsb counts them, but not fatal.
func apply(cl indexes.Client, op workloads.Op) (missed bool, err error) {
	switch op.Type {
	case workloads.Read:
		_, found, err := cl.Search(op.Key)
		return !found, err
	case workloads.Update:
		err := cl.Update(op.Key, op.Value)
		if errors.Is(err, indexes.ErrNotFound) {
			return true, nil
		}
		return false, err
	case workloads.Insert:
		return false, cl.Insert(op.Key, op.Value)
	case workloads.Scan:
		return false, cl.Scan(op.Key, op.ScanLength, func(_, _ []byte) bool { return true })
	case workloads.Delete:
		err := cl.Delete(op.Key)
		if errors.Is(err, indexes.ErrNotFound) {
			return true, nil
		}
		return false, err
	case workloads.ReadModifyWrite:
		if _, found, err := cl.Search(op.Key); err != nil || !found {
			return !found, err
		}
		err := cl.Update(op.Key, op.Value)
		if errors.Is(err, indexes.ErrNotFound) {
			return true, nil
		}
		return false, err
	}
	return false, fmt.Errorf("operation type %v unknown to the runner", op.Type)
}
