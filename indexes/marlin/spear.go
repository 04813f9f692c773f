package marlin

import (
	"fmt"

	"github.com/dmbench/dmbench/indexes/internal/inner"
	"github.com/dmbench/dmbench/transport"
)

// Spear, Marlin's ternary-state leaf lock, is the first word of every
// leaf, changed only by FAA. Its value is the number of insert, update
// and delete operations (IDUs) holding it shared minus smoX for a
// structure modification (SMO) holding it exclusive:
//
//	0          free
//	n > 0      n IDUs share it: they change slots by CAS, never the node
//	< 0        an SMO has it (waiting for the IDUs still in to leave when
//	           above -smoX, alone at exactly -smoX)
//
// An IDU adds 1 in the doorbell batch that READs the leaf; if the old
// value was negative an SMO holds the leaf, so it takes its 1 back and
// polls the word with READs until it is not negative, then tries again.
// An IDU that must split converts its share into the SMO state by adding
// -(smoX+1), then polls until the word is -smoX: every other IDU gone.
// If another SMO converted first, it gives its share back instead and
// starts over. An SMO ends by adding smoX back in the batch that WRITEs
// the leaf.
const smoX = 1 << 40

// faaMinus returns the FAA addend that subtracts n.
func faaMinus(n uint64) uint64 { return -n }

// acquireShared takes the Spear of the leaf at addr as an IDU and READs
// the leaf into img in the same doorbell batch: [FAA +1, READ leaf].
func (c *client) acquireShared(addr transport.GAddr, img []byte) error {
	for range inner.MaxRetries {
		c.ops = append(c.ops[:0], transport.FAAOp(addr.Add(offLock), 1), transport.ReadOp(img, addr))
		if err := c.post(c.ops); err != nil {
			return fmt.Errorf("locking and reading leaf %v: %w", addr, err)
		}
		if int64(c.ops[0].Old) >= 0 {
			if img[inner.OffFront] == img[len(img)-1] {
				return nil
			}
			// Only a READ that copies word by word can get here: it
			// overlapped the WRITE of an SMO that ended before the FAA.
			if err := c.releaseShared(addr); err != nil {
				return err
			}
			continue
		}
		if _, err := c.faa(addr.Add(offLock), faaMinus(1)); err != nil {
			return fmt.Errorf("backing off leaf %v: %w", addr, err)
		}
		if err := c.waitSpear(addr, func(w int64) bool { return w >= 0 }); err != nil {
			return err
		}
	}
	return fmt.Errorf("leaf %v: no shared Spear after %d tries", addr, inner.MaxRetries)
}

// releaseShared gives an IDU's share back: FAA -1.
func (c *client) releaseShared(addr transport.GAddr) error {
	if _, err := c.faa(addr.Add(offLock), faaMinus(1)); err != nil {
		return fmt.Errorf("releasing leaf %v: %w", addr, err)
	}
	return nil
}

// releaseSharedOp is the release as an op for the final doorbell batch.
func releaseSharedOp(addr transport.GAddr) transport.Op {
	return transport.FAAOp(addr.Add(offLock), faaMinus(1))
}

// waitSpear polls the Spear of the leaf at addr with 8-byte READs until
// ok accepts its value.
func (c *client) waitSpear(addr transport.GAddr, ok func(int64) bool) error {
	for range inner.MaxRetries {
		c.backoff()
		if err := c.Read(c.word[:], addr.Add(offLock)); err != nil {
			return fmt.Errorf("polling leaf %v: %w", addr, err)
		}
		if ok(int64(lockWord(c.word[:]))) {
			return nil
		}
	}
	return fmt.Errorf("leaf %v: Spear still held after %d polls", addr, inner.MaxRetries)
}

// acquireExclusive converts this IDU's share of the leaf at addr into the
// SMO state and READs the leaf into img in the same batch:
// [FAA -(smoX+1), READ leaf]. When other IDUs were still in, it polls the
// whole leaf until they have left, so that img is the leaf as the SMO
// finds it. It reports false when another SMO holds the leaf: the share
// has been given back, the SMO has ended, and the caller starts over.
func (c *client) acquireExclusive(addr transport.GAddr, img []byte) (bool, error) {
	c.ops = append(c.ops[:0], transport.FAAOp(addr.Add(offLock), faaMinus(smoX+1)), transport.ReadOp(img, addr))
	if err := c.post(c.ops); err != nil {
		return false, fmt.Errorf("converting the Spear of leaf %v: %w", addr, err)
	}
	old := int64(c.ops[0].Old)
	if old < 0 {
		if _, err := c.faa(addr.Add(offLock), smoX); err != nil {
			return false, fmt.Errorf("backing off leaf %v: %w", addr, err)
		}
		return false, c.waitSpear(addr, func(w int64) bool { return w >= 0 })
	}
	for range inner.MaxRetries {
		if int64(lockWord(img)) == -smoX {
			return true, nil
		}
		c.backoff()
		if err := c.Read(img, addr); err != nil {
			return false, fmt.Errorf("polling leaf %v: %w", addr, err)
		}
	}
	return false, fmt.Errorf("leaf %v: IDUs still in after %d polls", addr, inner.MaxRetries)
}

// releaseExclusiveOp ends an SMO, after the leaf's WRITE in one batch.
func releaseExclusiveOp(addr transport.GAddr) transport.Op {
	return transport.FAAOp(addr.Add(offLock), smoX)
}
