package verbs

import "github.com/dmbench/dmbench/transport"

// MaskedCASReadCAS is how this fabric runs masked compare-and-swap on
// every device (Profile reports it): READ the word, merge under the masks,
// CAS the whole word, retry on a change. Upstream rdma-core offers masked
// atomics only as mlx5 direct-verbs WQEs, which this fabric does not build.
const MaskedCASReadCAS = "read+cas"

// wordVerbs is what the masked-CAS fallback needs from an endpoint: an
// 8-byte READ and a CAS of one aligned word, each a verb of its own,
// counted as a READ and a CAS.
type wordVerbs interface {
	readWord(a transport.GAddr) (uint64, error)
	cas(a transport.GAddr, expect, swap uint64) (uint64, error)
}

// maskedCAS runs a masked CAS as a READ and a CAS loop, with the result
// the native verb has (transport.Op.Apply): it returns the word it acted
// on, which was replaced when its CmpMask bits equal expect's.
//
// A CAS that fails returns the word as it is now, so the next attempt
// merges into that word without another READ: a READ and one CAS when no
// other bit of the word changes in between, one more CAS per change. When
// the compare bits differ, or the merge would leave the word as it is, the
// word read is the answer and no CAS is sent: the READ is the moment the
// operation takes effect, as a failed native masked CAS would be.
func maskedCAS(w wordVerbs, a transport.GAddr, expect, swap, cmpMask, swapMask uint64) (uint64, error) {
	op := transport.MaskedCASOp(a, expect, swap, cmpMask, swapMask)
	cur, err := w.readWord(a)
	if err != nil {
		return 0, err
	}
	for {
		next, ok := op.Apply(cur)
		if !ok || next == cur {
			return cur, nil
		}
		old, err := w.cas(a, cur, next)
		if err != nil {
			return 0, err
		}
		if old == cur {
			return cur, nil
		}
		cur = old
	}
}
