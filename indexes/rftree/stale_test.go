package rftree

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"sort"
	"sync"
	"testing"

	"github.com/dmbench/dmbench/indexes"
	"github.com/dmbench/dmbench/indexes/indextest"
	"github.com/dmbench/dmbench/transport"
)

// The stale-SLC test's keys: loaded keys are 4(i+1), i < staleLoaded; the
// writers delete most loaded keys below staleMergeBelow (merging data
// nodes) and insert the keys 4(i+1)+1 and 4(i+1)+2 above it (splitting
// them).
const (
	staleLoaded     = 1200
	staleMergeBelow = 4 * 600
)

// staleVal is version v of key k's value (version 0: the loaded one).
func staleVal(k, v uint64) []byte { return binary.BigEndian.AppendUint64(nil, k<<20|v) }

func staleDecode(b []byte) (k, v uint64) {
	w := binary.BigEndian.Uint64(b)
	return w >> 20, w & (1<<20 - 1)
}

// write is one write of a key's single writer: the version it installs
// (absent: a delete), stamped at call and return.
type write struct {
	version    uint64
	absent     bool
	call, done int64
}

// read is one search of a reader, stamped.
type read struct {
	key        uint64
	version    uint64
	absent     bool
	call, done int64
}

// TestStaleSLCLinearizable: compute node A builds its SLC over a loaded
// tree; then, while A's clients search every key again and again through
// that SLC (and scan), compute node B's clients delete most keys of the
// lower half (their data nodes merge, and the freed ones are used again
// by splits) and insert twice as many keys into the upper half (data
// nodes and internal nodes split). Every key has one writer on B. Each of
// A's searches must return a value that the key held at some instant
// between the search's call and return, and no two searches of a key may
// see its writes out of order (a single-writer register is linearizable
// so), in both memory modes. A's SLC must have gone stale and been refreshed on the way, and
// merges and splits must have happened. (On the local fabric B may be
// done before A's clients get going; the simulator interleaves them.)
func TestStaleSLCLinearizable(t *testing.T) {
	for _, combo := range []struct {
		fabric string
		mode   transport.Mode
	}{{indextest.Sim, transport.ModePaper}, {indextest.Sim, transport.ModeStrict}, {indextest.Local, transport.ModePaper}, {indextest.Local, transport.ModeStrict}} {
		t.Run(combo.fabric+"/"+combo.mode.String(), func(t *testing.T) {
			in := indextest.New(t, "rftree", map[string]string{"node_bytes": "256", "merge_fill": "0.5"},
				indextest.Options{Fabric: combo.fabric, Config: indextest.Config(combo.mode, 3)})
			x := in.Index.(*Index)
			keys := make([][]byte, staleLoaded)
			vals := make([][]byte, staleLoaded)
			for i := range keys {
				k := uint64(4 * (i + 1))
				keys[i], vals[i] = key(k), staleVal(k, 0)
			}
			in.Load(t, keys, vals)
			nodes := in.ComputeNodes()
			a, b := nodes[0], nodes[1]

			// A builds its SLC.
			in.GoAll([]transport.NodeID{a}, func(w indextest.Worker, ep transport.Endpoint, c indexes.Client) {
				if w.ID == 0 {
					if _, _, err := c.Search(key(4)); err != nil {
						t.Errorf("%v: %v", w, err)
					}
				}
			})
			in.Run(t)
			before := x.cn(a).refreshes.Load()

			// B's writes, planned per key and dealt to B's clients.
			rng := rand.New(rand.NewPCG(11, 12))
			var plans [][]uint64 // per writer: keys to write, in order
			var universe []uint64
			for i := range staleLoaded {
				k := uint64(4 * (i + 1))
				universe = append(universe, k)
				if k >= staleMergeBelow {
					universe = append(universe, k+1, k+2)
				}
			}
			writers := in.Workers([]transport.NodeID{b})
			plans = make([][]uint64, writers)
			for _, k := range universe {
				if k < staleMergeBelow && rng.IntN(5) == 0 {
					continue // stays as loaded
				}
				w := rng.IntN(writers)
				plans[w] = append(plans[w], k)
			}
			var mu sync.Mutex
			history := map[uint64][]write{}
			for _, k := range universe {
				if k%4 == 0 {
					history[k] = []write{{version: 0, call: -1, done: -1}}
				} else {
					history[k] = []write{{absent: true, call: -1, done: -1}}
				}
			}
			var reads []read
			stop := make(chan struct{})
			remaining := writers
			in.GoAll([]transport.NodeID{a, b}, func(w indextest.Worker, ep transport.Endpoint, c indexes.Client) {
				if w.Node == b {
					me := w.ID - in.Workers([]transport.NodeID{a})
					for _, k := range plans[me] {
						var op write
						op.call = in.Stamp(ep)
						var err error
						if k%4 == 0 {
							op.absent = true
							err = c.Delete(key(k))
						} else {
							op.version = 1
							err = c.Insert(key(k), staleVal(k, 1))
						}
						op.done = in.Stamp(ep)
						if err != nil {
							t.Errorf("%v: write %d: %v", w, k, err)
							break
						}
						mu.Lock()
						history[k] = append(history[k], op)
						mu.Unlock()
					}
					mu.Lock()
					remaining--
					if remaining == 0 {
						close(stop)
					}
					mu.Unlock()
					return
				}
				r := rand.New(rand.NewPCG(uint64(w.ID), 99))
				for i := 0; ; i++ {
					select {
					case <-stop:
						return
					default:
					}
					if i%50 == 49 {
						checkScan(t, w, c, r, universe)
						continue
					}
					k := universe[r.IntN(len(universe))]
					var rd read
					rd.key = k
					rd.call = in.Stamp(ep)
					v, ok, err := c.Search(key(k))
					rd.done = in.Stamp(ep)
					if err != nil {
						t.Errorf("%v: search %d: %v", w, k, err)
						return
					}
					if ok {
						kk, ver := staleDecode(v)
						if kk != k {
							t.Errorf("%v: search %d returned the value of key %d", w, k, kk)
						}
						rd.version = ver
					} else {
						rd.absent = true
					}
					mu.Lock()
					reads = append(reads, rd)
					mu.Unlock()
				}
			})
			in.Run(t)
			checkReads(t, history, reads)

			// A reads every key once more: the final state, through
			// whatever its SLC has become.
			in.GoAll([]transport.NodeID{a}, func(w indextest.Worker, ep transport.Endpoint, c indexes.Client) {
				if w.ID != 0 {
					return
				}
				for _, k := range universe {
					last := history[k][len(history[k])-1]
					v, ok, err := c.Search(key(k))
					switch {
					case err != nil:
						t.Errorf("final search %d: %v", k, err)
					case ok != !last.absent:
						t.Errorf("final search %d: found %v, want %v", k, ok, !last.absent)
					case ok && string(v) != string(staleVal(k, last.version)):
						t.Errorf("final search %d = %x, want version %d", k, v, last.version)
					}
				}
			})
			in.Run(t)
			cn := x.cn(a)
			refreshes := cn.refreshes.Load() - before
			stale := cn.lookups.Load() - cn.hits.Load()
			splits, merges := x.cn(b).splits.Load(), x.cn(b).merges.Load()
			t.Logf("%d searches checked; %d of A's routes were stale; A refreshed its SLC %d times; B split %d data nodes and merged %d",
				len(reads), stale, refreshes, splits, merges)
			if stale == 0 && refreshes == 0 {
				t.Errorf("A's SLC sent no route astray and was never refreshed: it did not go stale")
			}
			if splits == 0 || merges == 0 {
				t.Errorf("B split %d data nodes and merged %d: want both", splits, merges)
			}
		})
	}
}

// checkReads checks each search against its key's single-writer history:
// the version seen was installed by a write that began before the search
// returned and was not replaced by a write that returned before the search
// began; and searches that do not overlap see versions in order.
func checkReads(t *testing.T, history map[uint64][]write, reads []read) {
	t.Helper()
	byKey := map[uint64][]read{}
	for _, r := range reads {
		byKey[r.key] = append(byKey[r.key], r)
	}
	bad := 0
	for k, rs := range byKey {
		ws := history[k] // in the writer's order
		index := func(r read) int {
			// The position of the write r saw: the latest one matching it
			// that began before r returned.
			for i := len(ws) - 1; i >= 0; i-- {
				if ws[i].absent == r.absent && (r.absent || ws[i].version == r.version) && ws[i].call <= r.done {
					return i
				}
			}
			return -1
		}
		sort.Slice(rs, func(i, j int) bool { return rs[i].call < rs[j].call })
		for _, r := range rs {
			i := index(r)
			switch {
			case i < 0:
				bad++
				t.Errorf("key %d: search [%d, %d] saw %s, which no write installed before it returned", k, r.call, r.done, show(r))
			case i+1 < len(ws) && ws[i+1].done < r.call:
				bad++
				t.Errorf("key %d: search [%d, %d] saw %s, overwritten at [%d, %d] before it began", k, r.call, r.done, show(r), ws[i+1].call, ws[i+1].done)
			}
			if bad > 20 {
				return
			}
		}
		for _, r1 := range rs {
			for _, r2 := range rs {
				if r1.done < r2.call && index(r2) < index(r1) {
					t.Errorf("key %d: search [%d, %d] saw %s, a later search [%d, %d] the older %s", k, r1.call, r1.done, show(r1), r2.call, r2.done, show(r2))
					return
				}
			}
		}
	}
}

func show(r read) string {
	if r.absent {
		return "the key absent"
	}
	return fmt.Sprintf("version %d", r.version)
}

// checkScan scans from a random key of the universe and checks what any
// scan must give however stale the SLC: keys strictly increasing from the
// start on, each with a value that is its own.
func checkScan(t *testing.T, w indextest.Worker, c indexes.Client, r *rand.Rand, universe []uint64) {
	start := universe[r.IntN(len(universe))]
	var prev uint64
	n := 0
	err := c.Scan(key(start), 40, func(k, v []byte) bool {
		kk := binary.BigEndian.Uint64(k)
		if kk < start || n > 0 && kk <= prev {
			t.Errorf("%v: scan from %d: key %d after %d", w, start, kk, prev)
		}
		if vk, _ := staleDecode(v); vk != kk {
			t.Errorf("%v: scan from %d: key %d holds the value of %d", w, start, kk, vk)
		}
		prev = kk
		n++
		return true
	})
	if err != nil {
		t.Errorf("%v: scan from %d: %v", w, start, err)
	}
}
