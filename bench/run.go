package bench

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/dmbench/dmbench/indexes"
	"github.com/dmbench/dmbench/transport"
	"github.com/dmbench/dmbench/transport/local"
	"github.com/dmbench/dmbench/transport/sim"
	"github.com/dmbench/dmbench/workloads"
)

// Build makes the fabric and the index of a run, without loading or
// running anything. The caller closes the fabric.
func Build(c *Config) (transport.Fabric, indexes.Index, error) {
	if err := c.Validate(); err != nil {
		return nil, nil, err
	}
	tc, err := c.cluster()
	if err != nil {
		return nil, nil, err
	}
	var f transport.Fabric
	switch c.Fabric {
	case "sim":
		p, _ := sim.LookupProfile(c.Profile) // validated
		f, err = sim.New(tc, p)
	case "local":
		f, err = local.New(tc)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("build %s fabric: %w", c.Fabric, err)
	}
	env := indexes.Env{Fabric: f, KeySize: c.Workload.KeySize, ValueSize: c.Workload.ValueSize(), CacheBytes: c.CacheBytes}
	if c.Workload.PartitionedKeys {
		parts, err := c.Workload.Partitions(c.ComputeNodes)
		if err != nil {
			f.Close()
			return nil, nil, err
		}
		for _, p := range parts {
			env.Partitions = append(env.Partitions, p.Start)
		}
	}
	spec, _ := indexes.Lookup(c.Index) // validated
	idx, err := spec.Build(env, c.Params)
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, idx, nil
}

// Run performs one run and returns its result.
func Run(c Config) (*Result, error) {
	f, idx, err := Build(&c)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := &runner{cfg: c, f: f, idx: idx}
	return r.run()
}

// runner holds one run's state.
type runner struct {
	cfg     Config
	f       transport.Fabric
	idx     indexes.Index
	clients []workloads.Client
	streams []*workloads.Stream

	mu       sync.Mutex // guards failure on the local fabric
	failure  error
	loadWall time.Duration
}

func (r *runner) run() (*Result, error) {
	c := &r.cfg
	w := c.Workload
	start := time.Now()
	records, err := w.Records()
	if err != nil {
		return nil, err
	}
	loader := r.f.Setup(r.f.Config().ComputeNodeIDs()[0])
	if err := r.idx.BulkLoad(loader, records); err != nil {
		return nil, fmt.Errorf("bulk load of %d records into %s: %w", w.RecordCount, c.Index, err)
	}
	r.loadWall = time.Since(start)

	r.clients, err = workloads.Cluster(c.ComputeNodes, c.Threads*c.Coroutines)
	if err != nil {
		return nil, err
	}
	for _, cl := range r.clients {
		st, err := w.Stream(cl)
		if err != nil {
			return nil, err
		}
		r.streams = append(r.streams, st)
	}

	if w.WarmupReadAll {
		if err := r.readAll(); err != nil {
			return nil, fmt.Errorf("warm-up read of every record: %w", err)
		}
	}
	if w.WarmupOperationCount > 0 {
		if _, err := r.phase(w.WarmupOperationCount, 0); err != nil {
			return nil, fmt.Errorf("warm-up: %w", err)
		}
	}
	before := r.idx.Info()
	r.f.ResetStats()
	wall := time.Now()
	rec, err := r.phase(w.OperationCount, c.MaxVirtualNs)
	if err != nil {
		return nil, fmt.Errorf("measured phase: %w", err)
	}
	return r.result(rec, time.Since(wall), before)
}

// phase runs ops operations split over every client and returns their
// latencies. With a cap, clients stop issuing once cap ns have passed.
func (r *runner) phase(ops int64, cap int64) (*recorder, error) {
	c := &r.cfg
	shared := c.Fabric == "sim" // one coroutine runs at a time
	var all *recorder
	var own []*recorder
	if shared {
		all = newRecorder()
	}
	ids := r.f.Config().ComputeNodeIDs()
	for i, cl := range r.clients {
		rec := all
		if !shared {
			rec = newRecorder()
			own = append(own, rec)
		}
		th := (i / c.Coroutines) % c.Threads
		r.f.Go(ids[cl.Node], th, r.body(r.streams[i], cl.Share(ops), cap, rec))
	}
	if err := r.f.Run(); err != nil {
		return nil, err
	}
	if err := r.failure; err != nil {
		return nil, err
	}
	if !shared {
		all = newRecorder()
		for _, rec := range own {
			all.merge(rec)
		}
	}
	return all, nil
}

// readAll has the clients search every loaded record once, unmeasured,
// as DMTree's evaluation warms its caches (section 5.1). Record r goes to
// client r mod clients; with partitioned keys, the clients of a compute
// node read the records of its own partition.
func (r *runner) readAll() error {
	c := &r.cfg
	w := c.Workload
	var parts []workloads.KeyRange
	if w.PartitionedKeys {
		var err error
		if parts, err = w.Partitions(c.ComputeNodes); err != nil {
			return err
		}
	}
	ids := r.f.Config().ComputeNodeIDs()
	perNode := c.Threads * c.Coroutines
	for i, cl := range r.clients {
		stride, first := int64(cl.Total), int64(cl.Index)
		if parts != nil {
			stride, first = int64(perNode), int64(cl.Index%perNode)
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
	return r.failure
}

// body is one client's loop over its share of a phase.
func (r *runner) body(st *workloads.Stream, ops, cap int64, rec *recorder) func(transport.Endpoint) {
	return func(ep transport.Endpoint) {
		cl := r.idx.NewClient(ep)
		start := ep.Now()
		for range ops {
			if cap > 0 && ep.Now()-start >= cap {
				break
			}
			op := st.Next()
			ep.SetTag(transport.Tag(op.Type) + 1)
			t0 := ep.Now()
			missed, err := apply(cl, op)
			rec.record(op.Type, ep.Now()-t0, missed)
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
// key where the workload expects one (a read or update of a loaded key):
// counted as failed, as go-ycsb counts them, but not fatal.
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
