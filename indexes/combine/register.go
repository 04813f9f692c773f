package combine

import (
	"fmt"
	"slices"
)

// RegisterOp is one operation on a single key, for CheckRegister: an
// update (Write) of a value, or a search that returned one, with its call
// and return times.
type RegisterOp struct {
	Write        bool
	Val          uint64
	Call, Return int64
}

// CheckRegister decides whether a history of one key is linearizable
// when every update writes a distinct value and the key holds 0 before
// any operation. It is the polynomial test of Gibbons and Korach, where a
// general checker (porcupine) explodes on a hundred overlapping writers:
// group each update with the searches that returned its value; a group's
// zone runs from the earliest return to the latest call of its operations
// and is forward when the earliest return comes first. The history is
// linearizable iff no search returns before its update is called, no two
// forward zones overlap, and no backward zone lies inside a forward one.
// Operations that return at the instant another is called may be ordered
// either way.
func CheckRegister(ops []RegisterOp) error {
	type zone struct{ minRet, maxCall int64 }
	zones := map[uint64]*zone{0: {minRet: -1, maxCall: -1}}
	writeCall := map[uint64]int64{0: -1}
	for _, op := range ops {
		if op.Write {
			if _, dup := zones[op.Val]; dup {
				return fmt.Errorf("value %d written twice: values must be distinct", op.Val)
			}
			zones[op.Val] = &zone{minRet: op.Return, maxCall: op.Call}
			writeCall[op.Val] = op.Call
		}
	}
	for _, op := range ops {
		if op.Write {
			continue
		}
		z, ok := zones[op.Val]
		if !ok {
			return fmt.Errorf("a search returned %d, which no update wrote", op.Val)
		}
		if op.Return < writeCall[op.Val] {
			return fmt.Errorf("a search returned %d before its update began", op.Val)
		}
		z.minRet, z.maxCall = min(z.minRet, op.Return), max(z.maxCall, op.Call)
	}
	vals := make([]uint64, 0, len(zones))
	for v := range zones {
		vals = append(vals, v)
	}
	slices.Sort(vals)
	for _, a := range vals {
		za := zones[a]
		if za.minRet >= za.maxCall {
			continue // backward
		}
		for _, b := range vals {
			zb := zones[b]
			if a == b || !(za.minRet < zb.maxCall && zb.minRet < za.maxCall) {
				continue
			}
			if zb.minRet < zb.maxCall {
				return fmt.Errorf("the forward zones of values %d and %d overlap", a, b)
			}
			return fmt.Errorf("the backward zone of value %d lies inside the forward zone of %d", b, a)
		}
	}
	return nil
}
