package bench

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/dmbench/dmbench/indexes"
	"github.com/dmbench/dmbench/indexes/combine"
	"github.com/dmbench/dmbench/transport"
	"github.com/dmbench/dmbench/transport/rendezvous"
	"github.com/dmbench/dmbench/transport/tcp"
)

// DefaultWait bounds a compute-node process's waits for the others when
// Process.Wait is 0: long enough for the loader to bulk-load millions of
// records over TCP.
const DefaultWait = 30 * time.Minute

// member is a compute-node process's place in its run. Its methods are
// no-ops on nil, the one-process run.
type member struct {
	rv   *rendezvous.Client
	node int // position among the compute nodes
}

// runs reports whether this process runs compute node (a position).
func (m *member) runs(node int) bool { return m == nil || m.node == node }

// barrier waits until every compute node of the run reaches it.
func (m *member) barrier(name string) error {
	if m == nil {
		return nil
	}
	_, err := m.rv.Exchange(name, nil)
	return err
}

// digest names the run at the rendezvous: every field of the
// configuration but where this process listens.
func (c *Config) digest() string {
	plain := *c
	plain.Process, plain.ClusterKey, plain.Workload = nil, nil, nil
	b, _ := json.Marshal(struct {
		C     Config
		Props map[string]string
	}{plain, c.Workload.Properties()})
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:16])
}

// runProcess runs one compute node of c in this process: it joins the
// rendezvous, which gives it its compute node; connects to the memory
// nodes and the other compute nodes; builds and loads the index if it is
// the first to claim it, or waits and attaches; runs its clients in step
// with the other processes; and returns the run's result merged from all.
// A failure is told to the other processes, which fail too, naming this
// compute node.
func runProcess(c Config) (*Result, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	p := c.Process
	if p.Wait <= 0 {
		p.Wait = DefaultWait
	}
	rv, err := rendezvous.Join(p.Rendezvous, c.ClusterKey, c.digest(), c.ComputeNodes, p.Wait)
	if err != nil {
		return nil, err
	}
	defer rv.Leave()
	m := &member{rv: rv, node: rv.Position()}
	res, err := m.run(c)
	if err != nil {
		err = fmt.Errorf("compute node %d: %w", m.node, err)
		if aerr := rv.Abort(err); aerr != nil {
			err = errors.Join(err, fmt.Errorf("telling the other compute nodes: %w", aerr))
		}
		return nil, err
	}
	return res, nil
}

func (m *member) run(c Config) (*Result, error) {
	tc, err := c.cluster()
	if err != nil {
		return nil, err
	}
	self := tc.ComputeNodeIDs()[m.node]
	// The first compute node connects first and asks the memory nodes for
	// fresh memory; the others connect once it has, keeping that memory.
	f, err := c.fabric(tcp.Options{MemNodes: c.MemNodes, Key: c.ClusterKey, Keep: m.node != 0,
		Compute: []transport.NodeID{self}, Listen: c.Process.Listen,
		Peers: func(own map[transport.NodeID]string) ([]string, error) {
			all, err := m.rv.Exchange("addresses", []byte(own[self]))
			if err != nil {
				return nil, err
			}
			addrs := make([]string, len(all))
			for i, a := range all {
				addrs[i] = string(a)
			}
			if m.node != 0 {
				err = m.barrier("fresh")
			}
			return addrs, err
		}})
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if m.node == 0 {
		if err := m.barrier("fresh"); err != nil {
			return nil, err
		}
	}
	r := &runner{cfg: c, f: f, proc: m}
	// Another compute node's failure stops this one's clients at once,
	// rather than at the end of its phase.
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		select {
		case err := <-m.rv.Aborted():
			r.fail(err)
			r.stopped.Store(true)
		case <-stop:
		}
	}()
	setup := f.Setup(self)
	won, err := indexes.Claim(setup, f)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	if won {
		if r.idx, err = c.index(f, false, []transport.NodeID{self}); err != nil {
			return nil, err
		}
		records, err := c.Workload.Records()
		if err != nil {
			return nil, err
		}
		if err := r.idx.BulkLoad(setup, records); err != nil {
			return nil, fmt.Errorf("bulk load into %s: %w", c.Index, err)
		}
		if err := indexes.Publish(setup, f); err != nil {
			return nil, err
		}
	} else {
		if err := indexes.AwaitReady(setup, f, c.Process.Wait); err != nil {
			return nil, err
		}
		if r.idx, err = c.index(f, true, []transport.NodeID{self}); err != nil {
			return nil, err
		}
	}
	r.loadWall = time.Since(start)
	if err := m.barrier("loaded"); err != nil {
		return nil, err
	}
	return r.run()
}

// partial is what one compute-node process measured, handed to the
// others at the end of the run.
type partial struct {
	Hists      [numOps]string
	Ops, Fails [numOps]int64
	Ticks      []int64
	Stats      transport.Stats
	WallNs     int64
	Info       indexes.Info
	Before     indexes.Info
	Combined   [2]combine.Sizes
	Combining  [2]combine.Sizes
	Combiner   bool
}

// merged exchanges this process's measurements with the others' and
// assembles the whole run's result: histograms, counters and cache
// statistics summed, the phase as long as the longest compute node's.
func (r *runner) merged(rec *recorder, wall time.Duration, before indexes.Info) (*Result, error) {
	mine := partial{Ops: rec.ops, Fails: rec.fails, Ticks: rec.ticks, Stats: r.f.Stats(), WallNs: int64(wall),
		Info: r.idx.Info(), Before: before, Combined: r.combined}
	for i, h := range rec.hists {
		enc, err := encodeHist(h)
		if err != nil {
			return nil, err
		}
		mine.Hists[i] = enc
	}
	if cb, ok := r.idx.(indexes.Combiner); ok {
		mine.Combiner = true
		mine.Combining[0], mine.Combining[1] = cb.CombiningSizes()
	}
	b, err := json.Marshal(mine)
	if err != nil {
		return nil, fmt.Errorf("encoding compute node %d's measurements: %w", r.proc.node, err)
	}
	all, err := r.proc.rv.Exchange(rendezvous.Done, b)
	if err != nil {
		return nil, err
	}
	sum := &merger{rec: newRecorder(rec.window)}
	for node, b := range all {
		var p partial
		if err := json.Unmarshal(b, &p); err != nil {
			return nil, fmt.Errorf("decoding compute node %d's measurements: %w", node, err)
		}
		if err := sum.add(&p); err != nil {
			return nil, fmt.Errorf("compute node %d's measurements: %w", node, err)
		}
	}
	for i := range sum.stats.Nodes {
		n := &sum.stats.Nodes[i]
		n.Role = r.f.Config().Role(n.ID) // not in the JSON
	}
	r.f = statsOf{r.f, sum.stats}
	r.idx = infoOf{r.idx, sum.info}
	r.combined = sum.combined
	res, err := r.result(sum.rec, time.Duration(sum.wallNs), sum.before)
	if err != nil {
		return nil, err
	}
	if !sum.combiner {
		res.Combining = nil
	} else {
		res.Combining = &Combining{Reads: roundSizes(sum.combining[0].Since(sum.combined[0])), Writes: roundSizes(sum.combining[1].Since(sum.combined[1]))}
	}
	return res, nil
}

// merger sums the partials of a run's compute nodes.
type merger struct {
	rec                 *recorder
	stats               transport.Stats
	info, before        indexes.Info
	combined, combining [2]combine.Sizes
	combiner            bool
	wallNs              int64
	n                   int
}

func (m *merger) add(p *partial) error {
	o := &recorder{window: m.rec.window, ops: p.Ops, fails: p.Fails, ticks: p.Ticks}
	for i, enc := range p.Hists {
		h, err := hdrhistogram.Decode([]byte(enc))
		if err != nil {
			return fmt.Errorf("histogram: %w", err)
		}
		o.hists[i] = h
	}
	m.rec.merge(o)
	if m.n == 0 {
		m.stats, m.info, m.before = p.Stats, p.Info, p.Before
		m.stats.Verbs = transport.VerbStats{}
		m.stats.Nodes = slices.Clone(p.Stats.Nodes)
		for i := range m.stats.Nodes {
			n := &m.stats.Nodes[i]
			n.Msgs, n.RPCs, n.BytesTx, n.BytesRx = 0, 0, 0, 0
		}
		m.info.CacheBytes, m.info.CacheHits, m.info.CacheLookups, m.info.MemoryBytes = 0, 0, 0, 0
		m.before.CacheHits, m.before.CacheLookups = 0, 0
	}
	m.n++
	m.stats.WindowNs = max(m.stats.WindowNs, p.Stats.WindowNs)
	m.stats.Verbs.Merge(&p.Stats.Verbs)
	for i := range p.Stats.Nodes {
		n, o := &m.stats.Nodes[i], &p.Stats.Nodes[i]
		n.Msgs += o.Msgs
		n.RPCs += o.RPCs
		n.BytesTx += o.BytesTx
		n.BytesRx += o.BytesRx
	}
	m.info.CacheBytes += p.Info.CacheBytes
	m.info.CacheHits += p.Info.CacheHits
	m.info.CacheLookups += p.Info.CacheLookups
	// Each instance counts the memory-side bytes it allocated, the
	// builder's the load too: the index's footprint is their sum.
	m.info.MemoryBytes += p.Info.MemoryBytes
	m.before.CacheHits += p.Before.CacheHits
	m.before.CacheLookups += p.Before.CacheLookups
	for i := range 2 {
		m.combined[i].Merge(p.Combined[i])
		m.combining[i].Merge(p.Combining[i])
	}
	m.combiner = m.combiner || p.Combiner
	m.wallNs = max(m.wallNs, p.WallNs)
	return nil
}

// statsOf is a fabric whose Stats are the merged ones of every process.
type statsOf struct {
	transport.Fabric
	stats transport.Stats
}

func (s statsOf) Stats() transport.Stats { return s.stats }

// infoOf is an index whose Info is the merged one of every process.
type infoOf struct {
	indexes.Index
	info indexes.Info
}

func (i infoOf) Info() indexes.Info { return i.info }

// Open makes the fabric of c on running memory nodes (tcp, c.MemNodes),
// keeping what they hold from an earlier process of the same layout, and
// the index: attached to the one they hold when another process published
// it ready (go-ycsb's run after its load), or built afresh and claimed,
// for the caller to load and then Publish (built true). A claimed index
// never published, an earlier process that died mid-load, is an error
// naming it.
func Open(c *Config) (f transport.Fabric, idx indexes.Index, built bool, err error) {
	if err := c.Validate(); err != nil {
		return nil, nil, false, err
	}
	if c.Fabric != "tcp" || len(c.MemNodes) == 0 {
		return nil, nil, false, fmt.Errorf("opening what memory nodes hold needs the tcp fabric and running memory nodes, not the %s fabric", c.Fabric)
	}
	if f, err = c.fabric(tcp.Options{MemNodes: c.MemNodes, Key: c.ClusterKey, Keep: true}); err != nil {
		return nil, nil, false, err
	}
	setup := f.Setup(f.Config().ComputeNodeIDs()[0])
	won, err := indexes.Claim(setup, f)
	if err == nil && !won {
		err = indexes.AwaitReady(setup, f, 0)
	}
	if err == nil {
		idx, err = c.index(f, !won, nil)
	}
	if err != nil {
		return nil, nil, false, errors.Join(fmt.Errorf("memory nodes %v: %w", c.MemNodes, err), f.Close())
	}
	return f, idx, won, nil
}

// Publish marks the index on f built and loaded, for the processes that
// Open it later.
func Publish(f transport.Fabric) error {
	return indexes.Publish(f.Setup(f.Config().ComputeNodeIDs()[0]), f)
}
