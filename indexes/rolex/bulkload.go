package rolex

import (
	"encoding/binary"
	"fmt"
	"iter"

	"github.com/dmbench/dmbench/transport"
)

// BulkLoad trains the model on the sorted keys and packs them span to a
// leaf into one contiguous leaf array per memory node (leaf i on memory
// node i mod M, as the port's computed leaf addresses), then stores the
// model and the leaves' upper fences in a model region that compute nodes
// read on their first operation.
func (x *Rolex) BulkLoad(ep transport.Endpoint, kvs iter.Seq2[[]byte, []byte]) error {
	return x.load(ep, kvs)
}

func (x *Rolex) load(ep transport.Endpoint, kvs iter.Seq2[[]byte, []byte]) error {
	g := &x.g
	k, s := g.keySize, g.kvBytes()
	t := trainer{keySize: k, tol: float64(x.eps - 1)}
	var data []byte
	var prev []byte
	if kvs != nil {
		for key, val := range kvs {
			if len(key) != k || len(val) != g.valSize {
				return fmt.Errorf("bulk load: key of %d bytes and value of %d, want %d and %d", len(key), len(val), k, g.valSize)
			}
			if prev != nil && string(prev) >= string(key) {
				return fmt.Errorf("bulk load: keys not in increasing order at %x", key)
			}
			t.add(key)
			data = append(data, key...)
			data = append(data, val...)
			prev = data[len(data)-s : len(data)-s+k]
		}
		if t.first != nil {
			t.close()
		}
	}
	n := len(data) / s
	leaves := max((n+g.span-1)/g.span, 1)
	m := &model{keySize: k, span: g.span, eps: int64(x.eps), leaves: leaves, keys: int64(n), firsts: t.firsts, segs: t.segs}
	for i := 0; i < leaves-1; i++ {
		last := (i+1)*g.span - 1
		m.fences = append(m.fences, data[last*s:last*s+k]...)
	}
	mems := x.env.Fabric.Config().MemoryNodeIDs()
	per := (leaves + len(mems) - 1) / len(mems)
	arrays := make([][]byte, len(mems))
	for j, node := range mems {
		a, err := x.allocs[0].AllocOn(ep, node, uint64(per)*g.stride, transport.RegionAlign)
		if err != nil {
			return fmt.Errorf("bulk load: leaf array of %d leaves: %w", per, err)
		}
		m.bases = append(m.bases, a)
		arrays[j] = make([]byte, uint64(per)*g.stride)
	}
	l := g.newLeaf()
	for i := range leaves {
		lo, hi := min(i*g.span, n), min((i+1)*g.span, n)
		l.n = hi - lo
		clear(l.kv)
		copy(l.kv, data[lo*s:hi*s])
		o := uint64(i/len(mems)) * g.stride
		g.encode(l, arrays[i%len(mems)][o:o+uint64(g.wire)])
	}
	for j, a := range arrays {
		if err := writeAll(ep, m.bases[j], a); err != nil {
			return fmt.Errorf("bulk load: writing leaves: %w", err)
		}
	}
	header, body := m.marshal()
	region, err := x.allocs[0].AllocOn(ep, mems[0], uint64(headerBytes+len(body)), 64)
	if err != nil {
		return fmt.Errorf("bulk load: model region: %w", err)
	}
	if err := writeAll(ep, region, append(header, body...)); err != nil {
		return fmt.Errorf("bulk load: writing the model: %w", err)
	}
	if err := ep.Write(x.root, binary.LittleEndian.AppendUint64(nil, uint64(region))); err != nil {
		return fmt.Errorf("bulk load: publishing the model: %w", err)
	}
	x.leafBytes.Store(uint64(len(mems)*per) * g.stride)
	x.synLeaves.Store(0)
	x.modelSize.Store(uint64(headerBytes + len(body)))
	for _, st := range x.nodes {
		st.reset()
	}
	return nil
}

// writeAll writes b at a in pieces of at most 1 MiB.
func writeAll(ep transport.Endpoint, a transport.GAddr, b []byte) error {
	const piece = 1 << 20
	for o := 0; o < len(b); o += piece {
		if err := ep.Write(a.Add(uint64(o)), b[o:min(o+piece, len(b))]); err != nil {
			return err
		}
	}
	return nil
}
