package dlsm

import (
	"bytes"
	"errors"
	"fmt"
	"iter"

	"github.com/dmbench/dmbench/transport"
)

// BulkLoad writes kvs as full SSTables of each shard's key range straight
// into the shallowest level whose size limit holds the shard's records,
// the shape a load by Puts leaves once compaction has caught up (the
// artifact loads by Puts; the result is the same sorted data). Each
// shard's version goes to memory as its manifest too, for the compute
// node that attaches to it.
func (x *Index) BulkLoad(ep transport.Endpoint, kvs iter.Seq2[[]byte, []byte]) error {
	if x.env.Attach {
		return errors.New("dlsm: bulk load through an attached instance: the compute node that built the index loads it")
	}
	f := &x.f
	target := max(1, int(x.memBytes)/f.esz)
	tables := make([][]*table, len(x.shards))
	var pending []record
	cur := -1
	flush := func() error {
		if len(pending) == 0 {
			return nil
		}
		s := x.shards[cur]
		im, t := f.build(pending)
		addr, err := x.allocs[s.node].AllocOn(ep, s.mem, im.size(), 64)
		if err != nil {
			return fmt.Errorf("dlsm: bulk load: %w", err)
		}
		s.remote.Add(im.size())
		t.addr = addr
		img := append(append(append(make([]byte, 0, im.size()), im.data...), im.index...), im.tail...)
		if err := ep.Write(addr, img); err != nil {
			return fmt.Errorf("dlsm: bulk load: %w", err)
		}
		t.id = s.nextTable
		s.nextTable++
		tables[cur] = append(tables[cur], t)
		pending = nil
		return nil
	}
	var prev []byte
	for k, v := range kvs {
		if len(k) != f.ks || len(v) != f.vs {
			return fmt.Errorf("dlsm: bulk load pair of %d/%d bytes, the index holds %d-byte keys and %d-byte values", len(k), len(v), f.ks, f.vs)
		}
		if prev != nil && bytes.Compare(prev, k) >= 0 {
			return fmt.Errorf("dlsm: bulk load keys not in increasing order at %x", k)
		}
		prev = append(prev[:0], k...)
		if o := x.owner(k); o != cur || len(pending) == target {
			if err := flush(); err != nil {
				return err
			}
			cur = o
		}
		pending = append(pending, record{key: bytes.Clone(k), kind: kindValue, val: bytes.Clone(v)})
	}
	if err := flush(); err != nil {
		return err
	}
	for i, s := range x.shards {
		if len(tables[i]) == 0 {
			continue
		}
		lv := 1
		for lv < numLevels-1 && x.levelBytes(tables[i]) > x.maxLevelBytes(lv) {
			lv++
		}
		s.mu.Lock()
		nv := s.ver.clone()
		nv.levels[lv] = insertSorted(f, nv.levels[lv], tables[i])
		s.ver = nv
		s.mu.Unlock()
		if err := x.writeManifest(ep, s); err != nil {
			return fmt.Errorf("dlsm: bulk load: %w", err)
		}
	}
	return nil
}
