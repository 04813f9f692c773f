package combine

import "testing"

func TestCheckRegister(t *testing.T) {
	w := func(v uint64, call, ret int64) RegisterOp {
		return RegisterOp{Write: true, Val: v, Call: call, Return: ret}
	}
	r := func(v uint64, call, ret int64) RegisterOp { return RegisterOp{Val: v, Call: call, Return: ret} }
	for _, c := range []struct {
		name string
		ops  []RegisterOp
		ok   bool
	}{
		{"sequential", []RegisterOp{w(1, 0, 1), r(1, 2, 3), w(2, 4, 5), r(2, 6, 7)}, true},
		{"overlapping writes, either order", []RegisterOp{w(1, 0, 10), w(2, 0, 10), r(1, 11, 12)}, true},
		{"stale read", []RegisterOp{w(1, 0, 1), w(2, 2, 3), r(1, 4, 5)}, false},
		{"read from the future", []RegisterOp{r(1, 0, 1), w(1, 2, 3)}, false},
		{"new then old", []RegisterOp{w(1, 0, 1), w(2, 2, 10), r(2, 3, 4), r(1, 5, 6)}, false},
		{"initial value first", []RegisterOp{r(0, 0, 1), w(1, 2, 3)}, true},
		{"initial value after a write", []RegisterOp{w(1, 0, 1), r(0, 2, 3)}, false},
	} {
		if err := CheckRegister(c.ops); (err == nil) != c.ok {
			t.Errorf("%s: CheckRegister = %v, want ok %v", c.name, err, c.ok)
		}
	}
}
