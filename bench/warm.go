package bench

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/dmbench/dmbench/indexes"
	"github.com/dmbench/dmbench/transport"
	"github.com/dmbench/dmbench/transport/sim"
	"github.com/dmbench/dmbench/workloads"
)

// Warm lends the caches that one run's per-node warm-up built to the runs
// after it that warm up alike, so that they copy them
// (indexes.CacheCopier) instead of having a compute node search every
// loaded record again. The points of a sweep over client threads, scan
// lengths or operation mixes load the same records into the same index,
// and its searches of every record leave the same caches; a per-node
// warm-up of 10^6 records is most of such a point's simulator time.
//
// Runs that warm up alike share a key (Config.warmKey): the configuration
// without what only the clients' operations depend on. A run that finds no
// template for its key, and knows that more runs of the key are to come
// (Expect), keeps one: a second instance of its index, bulk-loaded, given
// the warm caches by a copy and never run. A later run copies from it only
// when its own bulk load left the same memory (sim.Fabric.MemoryDigest),
// so a key that misses something the load depends on costs a search, not
// a wrong result. Templates hold a whole index and its fabric, so a Warm
// keeps at most a few, dropping the least recently used, and each once
// every run expected of its key has copied. Warm is safe for concurrent
// runs; Close releases what it still holds.
type Warm struct {
	mu       sync.Mutex
	limit    int
	expected map[string]int // runs of a key not yet started
	building map[string]bool
	kept     []*template // least recently lent first
	lent     int         // copies made from templates, for tests
}

// template is a bulk-loaded instance of an index whose compute node from
// holds the caches a search of every record leaves.
type template struct {
	key    string
	digest uint64 // of the memory its bulk load left
	f      transport.Fabric
	idx    indexes.Index
	from   transport.NodeID
	// copying serialises the copies from it: a copy only reads it, but
	// its structures are not all safe to read concurrently.
	copying sync.Mutex
	users   int  // runs copying from it now, under Warm.mu
	dropped bool // close once users is 0, under Warm.mu
}

// NewWarm makes a Warm that keeps up to limit templates at once.
func NewWarm(limit int) *Warm {
	return &Warm{limit: max(limit, 1), expected: map[string]int{}, building: map[string]bool{}}
}

// Expect says that a run of c is to come, so that the run of c's key
// before it keeps a template for it.
func (w *Warm) Expect(c *Config) {
	if key, ok := c.warmKey(); ok {
		w.mu.Lock()
		w.expected[key]++
		w.mu.Unlock()
	}
}

// Close drops every template; runs still copying close theirs when done.
func (w *Warm) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	var errs []error
	for _, t := range w.kept {
		errs = append(errs, w.dropLocked(t))
	}
	w.kept, w.expected, w.building = nil, map[string]int{}, map[string]bool{}
	return errors.Join(errs...)
}

// start records that a run of key began.
func (w *Warm) start(key string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.expected[key] > 0 {
		w.expected[key]--
	}
}

// lend returns the template of key whose bulk load left memory of the
// given digest, for the caller to copy from and then give back; nil when
// there is none.
func (w *Warm) lend(key string, digest uint64) *template {
	w.mu.Lock()
	defer w.mu.Unlock()
	i := slices.IndexFunc(w.kept, func(t *template) bool { return t.key == key && t.digest == digest })
	if i < 0 {
		return nil
	}
	t := w.kept[i]
	w.kept = append(slices.Delete(w.kept, i, i+1), t) // now the most recently lent
	t.users++
	return t
}

// giveBack ends a copy from t, dropping t when no run of its key is to
// come.
func (w *Warm) giveBack(t *template) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	t.users--
	if w.expected[t.key] == 0 && !t.dropped {
		w.kept = slices.DeleteFunc(w.kept, func(k *template) bool { return k == t })
		return w.dropLocked(t)
	}
	if t.dropped && t.users == 0 {
		return t.f.Close()
	}
	return nil
}

// claim reports whether a run of key should build a template: more runs
// of it are to come, none is kept and no other run builds one (the first
// runs of a sweep start together). A claim ends with keep or unclaim.
func (w *Warm) claim(key string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.expected[key] == 0 || w.building[key] || slices.ContainsFunc(w.kept, func(t *template) bool { return t.key == key }) {
		return false
	}
	w.building[key] = true
	return true
}

// unclaim ends a claim that kept no template.
func (w *Warm) unclaim(key string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.building, key)
}

// keep adds t, ending its claim and dropping the least recently lent
// template beyond the limit.
func (w *Warm) keep(t *template) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.building, t.key)
	w.kept = append(w.kept, t)
	var errs []error
	for len(w.kept) > w.limit {
		errs = append(errs, w.dropLocked(w.kept[0]))
		w.kept = w.kept[1:]
	}
	return errors.Join(errs...)
}

// dropLocked closes t now, or when its last copy ends.
func (w *Warm) dropLocked(t *template) error {
	t.dropped = true
	if t.users == 0 {
		return t.f.Close()
	}
	return nil
}

// warmKey is what decides the state a per-node warm-up leaves: the
// configuration without the clients' threads and coroutines, the
// operation mix and counts, and the limits of the measured phase, which
// only the operations depend on. ok is false for a run whose warm-up is
// never lent: on another fabric than sim, with partitioned keys (each
// node searches its own), a trace, a repartitioning or compute-node
// processes.
func (c *Config) warmKey() (key string, ok bool) {
	w := c.Workload
	if c.Fabric != "sim" || c.Process != nil || c.Repartition != nil || c.searchEveryNode ||
		w == nil || w.WarmupReadAll != workloads.ReadAllPerNode || w.PartitionedKeys || w.TraceFile != "" {
		return "", false
	}
	k := *c
	k.Threads, k.Coroutines, k.MaxPhaseNs, k.TimelineNs = 0, 0, 0, 0
	ws := *w
	ws.Name, ws.Source = "", ""
	ws.OperationCount, ws.WarmupOperationCount = 0, 0
	ws.ReadProportion, ws.UpdateProportion, ws.InsertProportion = 0, 0, 0
	ws.ScanProportion, ws.ReadModifyWriteProportion = 0, 0
	ws.RequestDistribution, ws.ZipfianConstant = "", 0
	ws.HotspotDataFraction, ws.HotspotOpnFraction = 0, 0
	ws.MaxScanLength, ws.ScanLengthDistribution, ws.InsertSplit = 0, "", ""
	k.Workload = &ws
	b, err := json.Marshal(&k)
	if err != nil {
		return "", false
	}
	return string(b), true
}

// memoryDigest is the digest of the memory f holds (sim only).
func memoryDigest(f transport.Fabric) (uint64, bool) {
	s, ok := f.(*sim.Fabric)
	if !ok {
		return 0, false
	}
	return s.MemoryDigest(), true
}

// startWarm sets the run's warm-up key and load digest when its warm-up
// can be lent or borrowed, and counts the run as started.
func (r *runner) startWarm() {
	if r.warm == nil {
		return
	}
	key, ok := r.cfg.warmKey()
	if _, copies := r.idx.(indexes.CacheCopier); !ok || !copies {
		return
	}
	if u, ok := r.idx.(indexes.Uncached); ok && u.Uncached() {
		return
	}
	d, ok := memoryDigest(r.f)
	if !ok {
		return
	}
	r.key, r.digest = key, d
	r.warm.start(key)
}

// copyCaches gives compute node to the warm-up caches of tpl, or else of
// this run's compute node searched when warm; false when neither copies.
func (r *runner) copyCaches(copier indexes.CacheCopier, tpl *template, searched transport.NodeID, warm bool, to transport.NodeID) (bool, error) {
	if tpl != nil {
		tpl.copying.Lock()
		copied, err := copier.CopyCaches(tpl.idx, tpl.from, to)
		tpl.copying.Unlock()
		if err != nil {
			return false, fmt.Errorf("from another run's compute node %d: %w", tpl.from, err)
		}
		if copied {
			r.warm.mu.Lock()
			r.warm.lent++
			r.warm.mu.Unlock()
			return true, nil
		}
	}
	if !warm {
		return false, nil
	}
	copied, err := copier.CopyCaches(r.idx, searched, to)
	if err != nil {
		return false, fmt.Errorf("from compute node %d: %w", searched, err)
	}
	return copied, nil
}

// keepTemplate keeps, for the runs of its key to come, a second instance
// of the run's index, bulk-loaded as the run's was and given the caches
// of the run's compute node from, which searched every record; it does
// nothing when r.warm wants no template of the run's key.
func (r *runner) keepTemplate(from transport.NodeID) error {
	if !r.warm.claim(r.key) {
		return nil
	}
	c := r.cfg
	f, idx, err := Build(&c)
	if err != nil {
		r.warm.unclaim(r.key)
		return err
	}
	t := &template{key: r.key, f: f, idx: idx, from: f.Config().ComputeNodeIDs()[0]}
	copied, err := t.load(&c, r.idx, from)
	if err == nil && copied && t.digest != r.digest {
		err = fmt.Errorf("two bulk loads of one configuration left different memory: the load is not deterministic")
	}
	if err != nil || !copied {
		r.warm.unclaim(r.key)
		return errors.Join(err, f.Close())
	}
	return r.warm.keep(t)
}

// load bulk-loads t as c says and copies to it the caches of compute node
// from of src; false when the index refuses the copy.
func (t *template) load(c *Config, src indexes.Index, from transport.NodeID) (bool, error) {
	records, err := c.Workload.Records()
	if err != nil {
		return false, err
	}
	if err := t.idx.BulkLoad(t.f.Setup(t.from), records); err != nil {
		return false, fmt.Errorf("bulk load: %w", err)
	}
	t.digest, _ = memoryDigest(t.f)
	return t.idx.(indexes.CacheCopier).CopyCaches(src, from, t.from)
}
