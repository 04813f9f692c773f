package indextest

import (
	"sync/atomic"
	"testing"
)

// maxReports bounds the violations a case prints: after the first wrong
// result the index's state and the model's differ, and later reports
// mostly repeat the first.
const maxReports = 20

// reporter receives a case's consistency violations: wrong results and
// unexpected errors. It fails the test, except when the index relies on
// paper mode and the case runs in strict mode: then it logs them, because
// the index is known not to be correct there (its Spec.PaperMode says
// why). Crashes, deadlocks and a failed bulk load always fail: they do not
// come through here. It is safe for concurrent use.
type reporter struct {
	t testing.TB
	// paper is the index's PaperMode reason when violations are
	// tolerated, "" when they fail the test.
	paper string
	count atomic.Int64
}

func newReporter(t testing.TB, tolerate string) *reporter {
	r := &reporter{t: t, paper: tolerate}
	t.Cleanup(func() {
		n := r.count.Load()
		switch {
		case r.paper != "" && n > 0:
			t.Logf("%d consistency violations tolerated: the index relies on paper mode (%s)", n, r.paper)
		case r.paper != "":
			t.Logf("no consistency violation, although the index declares it relies on paper mode (%s)", r.paper)
		case n > maxReports:
			t.Errorf("%d consistency violations in all; the first %d are shown", n, maxReports)
		}
	})
	return r
}

// Errorf reports one violation.
func (r *reporter) Errorf(format string, args ...any) {
	r.t.Helper()
	n := r.count.Add(1)
	switch {
	case r.paper != "" && n <= maxReports:
		r.t.Logf("tolerated in strict mode: "+format, args...)
	case r.paper != "":
	case n <= maxReports:
		r.t.Errorf(format, args...)
	default:
		r.t.Fail()
	}
}
