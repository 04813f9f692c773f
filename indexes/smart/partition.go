package smart

import (
	"bytes"
	"fmt"
	"sort"
	"sync"

	"github.com/dmbench/dmbench/cost"
	"github.com/dmbench/dmbench/transport"
)

// partitions are P-SMART's key ranges: bounds[i] is the lower bound of
// the range of compute node owners[i] (Env.Partitions, the workload's
// partitionedkeys).
type partitions struct {
	bounds [][]byte
	owners []transport.NodeID
}

func newPartitions(bounds [][]byte, computeNodes []transport.NodeID, keySize int) (*partitions, error) {
	if len(bounds) == 0 || len(bounds) > len(computeNodes) {
		return nil, fmt.Errorf("partitioned=true needs one partition lower bound per owning compute node (Env.Partitions, the workload's partitionedkeys): got %d bounds for %d compute nodes", len(bounds), len(computeNodes))
	}
	for i, b := range bounds {
		if len(b) != keySize {
			return nil, fmt.Errorf("partition bound %d is %d bytes, want the key size %d", i, len(b), keySize)
		}
		if i > 0 && bytes.Compare(bounds[i-1], b) >= 0 {
			return nil, fmt.Errorf("partition bounds not increasing at %d: %x then %x", i, bounds[i-1], b)
		}
	}
	return &partitions{bounds: bounds, owners: computeNodes[:len(bounds)]}, nil
}

// owner is the compute node whose partition holds key.
func (p *partitions) owner(key []byte) transport.NodeID {
	i := sort.Search(len(p.bounds), func(i int) bool { return bytes.Compare(p.bounds[i], key) > 0 }) - 1
	return p.owners[max(i, 0)]
}

// localLocks are P-SMART's leaf locks: a compute node's writers of the
// leaves of its own partition exclude each other here instead of with a
// masked CAS on the leaf, so its writes issue no RDMA atomics. A leaf
// deleted under such a lock is remembered as dead, the role the lock
// byte's dead bit plays for RDMA locks.
type localLocks struct {
	stripes [localLockStripes]transport.Mutex
	mu      sync.Mutex // guards dead; never held across a verb
	dead    map[transport.GAddr]bool
}

const localLockStripes = 4096

// newLocalLocks makes the stripes ticket locks, the kind of SMART's
// hierarchical local lock (src/Tree.cpp, lock_node's acquire_local_lock).
func newLocalLocks() *localLocks {
	l := &localLocks{}
	for i := range l.stripes {
		l.stripes[i].Kind = transport.LockTicket
	}
	return l
}

func (l *localLocks) of(a transport.GAddr) *transport.Mutex {
	return &l.stripes[uint64(a)*0x9e3779b97f4a7c15>>52]
}

// lock takes leaf's local lock; false (and no lock held) if the leaf is
// dead.
func (l *localLocks) lock(ep transport.Endpoint, leaf transport.GAddr) bool {
	m := l.of(leaf)
	m.Lock(ep)
	ep.Compute(cost.CachelineTransfer())
	l.mu.Lock()
	dead := l.dead[leaf]
	l.mu.Unlock()
	if dead {
		m.Unlock()
		return false
	}
	return true
}

func (l *localLocks) unlock(leaf transport.GAddr, died bool) {
	if died {
		l.mu.Lock()
		if l.dead == nil {
			l.dead = map[transport.GAddr]bool{}
		}
		l.dead[leaf] = true
		l.mu.Unlock()
	}
	l.of(leaf).Unlock()
}
