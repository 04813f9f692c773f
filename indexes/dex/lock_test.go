package dex

import (
	"testing"

	"github.com/dmbench/dmbench/indexes/indextest"
	"github.com/dmbench/dmbench/transport/sim"
)

// A frame's write lock is the OptLock's writeLockOrRestart: one attempt
// that fails at once when another thread holds the lock or the version
// has moved on, never a wait (a queued writer would only find the version
// changed when its turn came, and with spinlock handoffs a hot inner node
// collapsed DEX's write-intensive throughput 30-fold).
func TestFrameLockIsOneAttempt(t *testing.T) {
	f := indextest.SimFabric(t, goldenCluster(), sim.CX5)
	ep := f.Setup(f.Config().ComputeNodeIDs()[0])
	var fr frame
	v := fr.ver.Load()
	if !fr.lock(ep, v) {
		t.Fatal("lock of a free frame at its version failed")
	}
	if fr.lock(ep, fr.ver.Load()) {
		t.Fatal("lock of a held frame succeeded")
	}
	fr.unlock()
	if fr.lock(ep, v) {
		t.Fatal("lock at a version the frame has moved past succeeded")
	}
	if !fr.lock(ep, fr.ver.Load()) {
		t.Fatal("lock of a released frame at its current version failed")
	}
	fr.unlock()
}
