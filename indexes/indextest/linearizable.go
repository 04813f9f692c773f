package indextest

import (
	"cmp"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/dmbench/dmbench/indexes"
	"github.com/dmbench/dmbench/transport"
)

// The linearizability case's size: every worker (12 on the default
// cluster) runs linOps operations (linOpsLocal on real fabrics), most on
// linHot hot keys, one group of Key's neighbours that share a leaf, so
// that writers of one key race all the time and reads race with writes
// often enough to catch torn reads in strict mode; the rest insert fresh
// keys of their own, which split leaves under the hot keys' operations,
// or search other workers' fresh keys. Real goroutines preempted in the
// middle of operations make long overlapping intervals, which porcupine
// explores much more slowly than the simulator's, hence fewer operations.
const (
	linHot      = 16
	linFiller   = 1000 // loaded keys around the hot ones
	linOps      = 600
	linOpsLocal = 300
	linFresh    = linOps // fresh key numbers per worker
	// linCheckTimeout bounds porcupine over the whole history.
	linCheckTimeout = 30 * time.Second
)

// Key numbers of the linearizability case.
const (
	linFillerBase = 1 << 20
	linFreshBase  = 1 << 24
)

// event is one operation of a history.
type event struct {
	worker int
	kind   opKind
	key    uint64 // key number
	// val is the value id written (insert, update) or read (search; 0:
	// absent).
	val      uint64
	notFound bool // update, delete: returned ErrNotFound
	call     int64
	ret      int64
}

func (e event) String() string {
	out := ""
	switch {
	case e.kind == opSearch && e.val == 0:
		out = " -> absent"
	case e.kind == opSearch:
		out = fmt.Sprintf(" -> %#x", e.val)
	case e.notFound:
		out = " -> not found"
	}
	v := ""
	if e.kind == opInsert || e.kind == opUpdate {
		v = fmt.Sprintf(" %#x", e.val)
	}
	return fmt.Sprintf("[%d, %d] worker %d: %s%s%s", e.call, e.ret, e.worker, e.kind, v, out)
}

// history is what the linearizability workload did.
type history struct {
	events []event
	// initial is the value id of each loaded hot key.
	initial map[uint64]uint64
	// unknown holds keys with an operation whose effect is unknown (it
	// returned an unexpected error, already reported): not checked.
	unknown map[uint64]bool
}

// testLinearizable runs the linearizability workload and checks its
// history per key with porcupine.
func testLinearizable(t *testing.T, c *combo) {
	fx := c.fixture(t, 3, 24, 16)
	fx.checkLinearizable(t, fx.linearizabilityWorkload(t))
}

// linearizabilityWorkload loads filler keys and every other hot key, then
// runs every worker of every compute node: each draws from its own seeded
// stream a mix of 70% hot-key operations (40% search, 25% insert, 20%
// update, 15% delete) and 30% fresh-key ones (inserting its next fresh
// key two times in three, else searching a fresh key number of any
// worker). Each operation is stamped at call and return (Instance.Stamp).
// Every value written is unique, so a search names the write it saw; a
// search returning a value no client wrote (torn, or corrupt) is reported
// at once and left out of the history.
func (fx *fixture) linearizabilityWorkload(t testing.TB) history {
	t.Helper()
	h := history{initial: map[uint64]uint64{}, unknown: map[uint64]bool{}}
	var load [][]byte
	loadIDs := map[string]uint64{}
	for i := range uint64(linFiller) {
		load = append(load, Key(linFillerBase+i, fx.p.ks))
	}
	for i := uint64(0); i < linHot; i += 2 {
		k := Key(i, fx.p.ks)
		load = append(load, k)
		h.initial[i] = 1<<62 | i
		loadIDs[string(k)] = h.initial[i]
	}
	load = sortedCopy(load)
	vals := make([][]byte, len(load))
	for i, k := range load {
		id, ok := loadIDs[string(k)]
		if !ok {
			id = 1<<61 | uint64(i)
		}
		vals[i] = Value(id, fx.p.vs)
	}
	fx.Load(t, load, vals)

	nodes := fx.ComputeNodes()
	workers := fx.Workers(nodes)
	ops := uint64(linOps)
	if fx.Fabric.Name() != Sim {
		ops = linOpsLocal
	}
	perWorker := make([][]event, workers)
	unknown := make([][]uint64, workers)
	// With partitioned keys only the workers of the hot keys' owner race
	// on them; the others work on fresh keys of their own partition.
	hotWorker := func(w Worker) bool { return fx.ownedBy(Key(0, fx.p.ks), w.Node) }
	nextFresh := func(w Worker, fresh *uint64) uint64 {
		k := linFreshBase + uint64(w.ID)*linFresh + *fresh
		for ; !fx.ownedBy(Key(k, fx.p.ks), w.Node); *fresh++ {
			k++
		}
		*fresh++
		return k
	}
	fx.GoAll(nodes, func(w Worker, ep transport.Endpoint, c indexes.Client) {
		ch := newChecker(c, fx.rep, w.String(), fx.p.ks, fx.p.vs)
		rng := rand.New(rand.NewPCG(fx.Fabric.Config().Seed, uint64(w.ID)))
		fresh := uint64(0)
		for seq := range ops {
			e := event{worker: w.ID, val: uint64(w.ID+1)<<32 + seq + 1}
			if rng.IntN(10) < 7 {
				e.key = rng.Uint64N(linHot)
				switch r := rng.IntN(100); {
				case r < 40:
					e.kind = opSearch
				case r < 65:
					e.kind = opInsert
				case r < 85:
					e.kind = opUpdate
				default:
					e.kind = opDelete
				}
				if !hotWorker(w) {
					e.kind, e.key = opInsert, nextFresh(w, &fresh)
				}
			} else if rng.IntN(3) < 2 {
				e.kind, e.key = opInsert, nextFresh(w, &fresh)
			} else {
				e.kind, e.key = opSearch, linFreshBase+rng.Uint64N(uint64(workers))*linFresh+rng.Uint64N(fresh+1)
				for !fx.ownedBy(Key(e.key, fx.p.ks), w.Node) {
					e.key = linFreshBase + rng.Uint64N(uint64(workers))*linFresh + rng.Uint64N(fresh+1)
				}
			}
			k := Key(e.key, fx.p.ks)
			var err error
			e.call = fx.Stamp(ep)
			if e.kind == opSearch {
				var v []byte
				var found bool
				v, found, err = ch.search(k)
				if err == nil && found {
					id, ok := ValueID(v, fx.p.vs)
					if !ok {
						fx.rep.Errorf("%v: search key %d found %x, which no client wrote: a torn or corrupt value", w, e.key, v)
						continue
					}
					e.val = id
				} else {
					e.val = 0
				}
			} else {
				err = ch.write(e.kind, k, Value(e.val, fx.p.vs))
			}
			e.ret = fx.Stamp(ep)
			switch {
			case errors.Is(err, indexes.ErrNotFound) && (e.kind == opUpdate || e.kind == opDelete):
				e.notFound = true
			case err != nil:
				fx.rep.Errorf("%v: %s key %d: %v", w, e.kind, e.key, err)
				if e.kind != opSearch {
					unknown[w.ID] = append(unknown[w.ID], e.key)
				}
				continue
			}
			perWorker[w.ID] = append(perWorker[w.ID], e)
		}
	})
	fx.Run(t)
	for i := range perWorker {
		h.events = append(h.events, perWorker[i]...)
		for _, k := range unknown[i] {
			h.unknown[k] = true
		}
	}
	return h
}

// checkLinearizable checks h key by key: each key is a register that is
// absent or holds one value; a search returns its content, an insert sets
// it, an update sets it if present and otherwise returns ErrNotFound, a
// delete clears it if present and otherwise returns ErrNotFound. The first
// key whose history porcupine cannot linearize is reported with the
// operations around the point where linearization gets stuck (and, unless
// violations are tolerated, with porcupine's visualization written to a
// temporary file), later ones in one line each. A key porcupine cannot
// decide within its share of linCheckTimeout is unknown, not wrong: the
// check goes on with the other keys, and if none is illegal the test is
// skipped with the count of keys left unchecked, since passing would claim
// what was not shown.
func (fx *fixture) checkLinearizable(t *testing.T, h history) {
	t.Helper()
	byKey := map[uint64][]porcupine.Operation{}
	for _, e := range h.events {
		if !h.unknown[e.key] {
			byKey[e.key] = append(byKey[e.key], porcupine.Operation{ClientId: e.worker, Input: e, Call: e.call, Return: e.ret})
		}
	}
	keys := make([]uint64, 0, len(byKey))
	for k := range byKey {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	deadline := time.Now().Add(linCheckTimeout)
	illegal := 0
	var unchecked []uint64
	for i, k := range keys {
		ops := byKey[k]
		m := registerModel(h.initial[k])
		// Each key gets an equal share of what is left, so one hard key
		// cannot leave the others unchecked.
		share := time.Until(deadline) / time.Duration(len(keys)-i)
		if share <= 0 {
			unchecked = append(unchecked, k)
			continue
		}
		switch porcupine.CheckOperationsTimeout(m, ops, share) {
		case porcupine.Ok:
		case porcupine.Unknown:
			unchecked = append(unchecked, k)
		case porcupine.Illegal:
			illegal++
			if illegal == 1 {
				fx.rep.Errorf("key %d (%x): its %d operations are not linearizable: %s", k, Key(k, fx.p.ks), len(ops), fx.explain(m, ops))
			} else {
				fx.rep.Errorf("key %d (%x): its %d operations are not linearizable either", k, Key(k, fx.p.ks), len(ops))
			}
		}
	}
	if len(unchecked) > 0 && illegal == 0 {
		t.Skipf("linearizability unknown for %d of %d keys (%v): porcupine could not decide them within %v on this machine; the other keys are linearizable, and the unchecked ones are not proven wrong", len(unchecked), len(keys), unchecked, linCheckTimeout)
	}
}

// explain says where porcupine's longest partial linearization of an
// illegal history gets stuck, lists the operations around that point in
// call order, and writes porcupine's visualization to a temporary file
// unless violations are tolerated (then every strict-mode run would leave
// a file behind).
func (fx *fixture) explain(m porcupine.Model, ops []porcupine.Operation) string {
	_, info := porcupine.CheckOperationsVerbose(m, ops, linCheckTimeout)
	var longest []int
	for _, l := range info.PartialLinearizations()[0] {
		if len(l) > len(longest) {
			longest = l
		}
	}
	done := make([]bool, len(ops))
	state := m.Init()
	for _, id := range longest {
		done[id] = true
		_, state = m.Step(state, ops[id].Input, nil)
	}
	// The remaining operation that returns first must be linearized
	// before any operation called after that: it is the one that cannot go.
	stuck := -1
	for i := range ops {
		if !done[i] && (stuck < 0 || ops[i].Return < ops[stuck].Return) {
			stuck = i
		}
	}
	order := make([]int, len(ops))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(ops[a].Call, ops[b].Call) })
	at := slices.Index(order, stuck)
	var b strings.Builder
	fmt.Fprintf(&b, "at most %d can be linearized; the key then holds %s and %v cannot follow. Operations around it in call order ([call, return] stamps; * marks those linearized):\n",
		len(longest), m.DescribeState(state), ops[stuck].Input)
	lo, hi := max(0, at-20), min(len(order), at+10)
	for _, i := range order[lo:hi] {
		mark := " "
		if done[i] {
			mark = "*"
		}
		if i == stuck {
			mark = ">"
		}
		fmt.Fprintf(&b, "\t%s %v\n", mark, ops[i].Input)
	}
	if fx.rep.paper != "" {
		return b.String()
	}
	f, err := os.CreateTemp("", "indextest-linearizability-*.html")
	if err != nil {
		fmt.Fprintf(&b, "(no visualization: %v)", err)
		return b.String()
	}
	if err := errors.Join(porcupine.Visualize(m, info, f), f.Close()); err != nil {
		fmt.Fprintf(&b, "(no visualization: writing %s: %v)", f.Name(), err)
		return b.String()
	}
	fmt.Fprintf(&b, "porcupine's visualization of the key's history: %s", f.Name())
	return b.String()
}

// registerModel is the sequential specification of one key whose initial
// value id is init (0: absent).
func registerModel(init uint64) porcupine.Model {
	return porcupine.Model{
		Init: func() any { return init },
		Step: func(state, input, _ any) (bool, any) {
			s, e := state.(uint64), input.(event)
			switch e.kind {
			case opSearch:
				return e.val == s, s
			case opInsert:
				return true, e.val
			case opUpdate:
				if s == 0 {
					return e.notFound, s
				}
				return !e.notFound, e.val
			default:
				if s == 0 {
					return e.notFound, s
				}
				return !e.notFound, uint64(0)
			}
		},
		DescribeOperation: func(input, _ any) string { return input.(event).String() },
		DescribeState: func(state any) string {
			if state.(uint64) == 0 {
				return "absent"
			}
			return fmt.Sprintf("%#x", state.(uint64))
		},
	}
}
