package indextest

import (
	"testing"

	"github.com/dmbench/dmbench/transport"
)

// Op is one operation of a golden verb test, on a client of type C (an
// index's Client, or its own client type in an internal test).
type Op[C any] struct {
	Name string
	Do   func(C) error
}

// VerbsPerOp runs ops in order on one client that newClient makes on
// thread 0 of node: warm first, when not nil, with its verbs untagged,
// then each op under its own tag. It returns the verbs each op issued,
// which a golden test compares with the sequence its index's doc.go
// lists. An op that fails fails t.
func VerbsPerOp[C any](t testing.TB, f transport.Fabric, node transport.NodeID, newClient func(transport.Endpoint) C, warm func(C, transport.Endpoint), ops []Op[C]) []transport.Counters {
	t.Helper()
	if len(ops) >= transport.MaxTags {
		t.Fatalf("indextest: %d operations, but an endpoint has %d tags", len(ops), transport.MaxTags-1)
	}
	f.Go(node, 0, func(ep transport.Endpoint) {
		c := newClient(ep)
		if warm != nil {
			warm(c, ep)
		}
		for i, o := range ops {
			ep.SetTag(transport.Tag(i + 1))
			if err := o.Do(c); err != nil {
				t.Errorf("%s: %v", o.Name, err)
			}
		}
		ep.SetTag(0)
	})
	if err := f.Run(); err != nil {
		t.Fatalf("indextest: running the operations: %v", err)
	}
	st := f.Stats()
	out := make([]transport.Counters, len(ops))
	for i := range ops {
		out[i] = st.Verbs.ByTag[i+1]
	}
	return out
}
