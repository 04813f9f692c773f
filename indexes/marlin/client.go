package marlin

import (
	"github.com/dmbench/dmbench/indexes/internal/inner"
	"github.com/dmbench/dmbench/transport"
)

// pollNs is the back-off between READs of a lock word that is held.
const pollNs = 500

// client runs operations for one coroutine. Its buffers are reused
// across operations and never shared.
type client struct {
	// Client is the internal-node layer's part: the endpoint, the work
	// charged, node buffers and the path of the current operation.
	// Internal-node locks need nothing to be released but the node's
	// address.
	inner.Client[struct{}]
	x   *Index
	tag uint64 // written into internal node locks

	item    []byte // a data item being written
	word    [8]byte
	ops     []transport.Op
	scanBuf []byte

	// itemAddr is the item this write operation has written (0: none
	// yet), kept across its retries.
	itemAddr uint64
}

func (c *client) faa(a transport.GAddr, add uint64) (uint64, error) {
	c.Flush()
	return c.EP.FAA(a, add)
}

// post issues ops as one doorbell batch (a single op as a plain verb).
func (c *client) post(ops []transport.Op) error {
	c.Flush()
	if len(ops) == 0 {
		return nil
	}
	return c.EP.Post(ops...)
}

// backoff waits before polling a held lock again.
func (c *client) backoff() {
	c.Flush()
	c.EP.Backoff(pollNs)
}
