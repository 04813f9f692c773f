package dex

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/dmbench/dmbench/cost"
)

// kv is one scanned entry.
type kv struct{ k, v []byte }

// Scan reads up to n entries from start as chained lookups over the
// leaves' fence keys (section 7: leaves are not linked). Ranges another
// compute node owns are scanned there. Scans are never offloaded.
func (c *client) Scan(start []byte, n int, fn func(key, val []byte) bool) error {
	k := bytes.Clone(start)
	for n > 0 && k != nil {
		var out []kv
		var next []byte
		err := c.own(k, func() error {
			var err error
			out, next, err = c.scanLocal(k, n)
			return err
		}, func(o int) error {
			var err error
			out, next, err = c.forwardScan(o, k, n)
			return err
		})
		if err != nil {
			return err
		}
		for _, e := range out {
			n--
			if !fn(e.k, e.v) {
				return nil
			}
		}
		k = next
	}
	return nil
}

// scanLocal scans up to n entries from start within this compute node's
// partition and returns where to continue (nil at the end of the keys).
func (c *client) scanLocal(start []byte, n int) ([]kv, []byte, error) {
	l := &c.x.l
	var limit []byte
	if c.x.opt.partitioned {
		limit = c.x.parts.Load().limit(start)
		// Keys a repartitioning is moving away wait in Scan's next lookup.
		if fr := c.cn.frozen.Load(); fr != nil && bytes.Compare(start, fr.low) < 0 &&
			(limit == nil || bytes.Compare(fr.low, limit) < 0) {
			limit = fr.low
		}
	}
	k := bytes.Clone(start)
	var out []kv
	for len(out) < n {
		var got []kv
		var high []byte
		collect := func(nd node) (bool, error) {
			got, high = got[:0], nil
			i, _ := l.leafFind(nd, k)
			for ; i < nd.count() && len(out)+len(got) < n; i++ {
				got = append(got, kv{bytes.Clone(l.leafKey(nd, i)), bytes.Clone(l.leafVal(nd, i))})
			}
			if h := l.highKey(nd); h != nil {
				high = bytes.Clone(h)
			}
			return false, nil
		}
		if _, _, err := c.onLeaf(k, nil, opScan, collect); err != nil {
			return nil, nil, err
		}
		// Charged after onLeaf: a Compute inside fn would yield while the
		// frame's image lock is held.
		c.ep.Compute(cost.Copy(len(got) * l.leafEnt))
		out = append(out, got...)
		if high == nil {
			return out, nil, nil
		}
		k = high
		if limit != nil && bytes.Compare(k, limit) >= 0 {
			return out, k, nil
		}
	}
	return out, k, nil
}

func (c *client) forwardScan(owner int, start []byte, n int) ([]kv, []byte, error) {
	req := []byte{byte(opScan)}
	req = binary.LittleEndian.AppendUint32(req, uint32(n))
	req = append(req, start...)
	raw, err := c.ep.Call(c.x.comps[owner], methodForward, req)
	if err != nil {
		return nil, nil, fmt.Errorf("dex: forward scan: %w", err)
	}
	if raw[0] == fwdWrongOwner {
		return nil, nil, errWrongOwner
	}
	if len(raw) > 2 && raw[1] == 2 {
		return nil, nil, fmt.Errorf("dex: forwarded scan: %s", raw[2:])
	}
	return c.decodeScan(raw[2:])
}

// encodeScan is a forwarded scan's reply: count, entries, continuation.
func encodeScan(out []kv, next []byte) []byte {
	b := []byte{fwdOK, 0}
	b = binary.LittleEndian.AppendUint32(b, uint32(len(out)))
	for _, e := range out {
		b = append(b, e.k...)
		b = append(b, e.v...)
	}
	if next != nil {
		b = append(b, 1)
		return append(b, next...)
	}
	return append(b, 0)
}

func (c *client) decodeScan(b []byte) ([]kv, []byte, error) {
	l := &c.x.l
	cnt := int(binary.LittleEndian.Uint32(b))
	b = b[4:]
	out := make([]kv, cnt)
	for i := range out {
		out[i] = kv{bytes.Clone(b[:l.ks]), bytes.Clone(b[l.ks : l.ks+l.vs])}
		b = b[l.ks+l.vs:]
	}
	if b[0] == 1 {
		return out, bytes.Clone(b[1 : 1+l.ks]), nil
	}
	return out, nil, nil
}
