package experiments

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/dmbench/dmbench/bench"
)

func TestQuotientsAndCloseness(t *testing.T) {
	vs := []Verdict{
		{Quotient: 1.05},              // within every band
		{Quotient: 0.8},               // 1.25x off: within 1.25x and 1.5x
		{Quotient: 1.4},               // within 1.5x
		{Quotient: 3},                 // beyond every band
		{},                            // no number (greater, less, ...)
		{Quotient: math.Inf(1)},       // a zero denominator
		{Quotient: 1, Status: Missed}, // inside a range, yet missed elsewhere
	}
	c := Close(vs)
	if c.Of != 5 || c.Within[0] != 2 || c.Within[1] != 3 || c.Within[2] != 4 {
		t.Errorf("closeness %+v, want 5 with a number: 2 within 1.1x, 3 within 1.25x, 4 within 1.5x", c)
	}
	if got := c.String(); !strings.Contains(got, "of 5 with a number, 2 within 1.1x, 3 within 1.25x, 4 within 1.5x") {
		t.Errorf("summary %q", got)
	}
	if off, ok := (Verdict{Quotient: 0.5}).Off(); !ok || off != 2 {
		t.Errorf("Off of 0.5 = %g, %v; want 2, true", off, ok)
	}
	if formatQuotient(Verdict{}) != "" || formatQuotient(Verdict{Quotient: 0.5}) != "0.50" {
		t.Error("formatQuotient shows a quotient where there is none, or the wrong one")
	}
}

func TestEvaluateGivesQuotients(t *testing.T) {
	s, err := Parse("tiny.yaml", []byte(tinySpec))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		c    Claim
		want float64
	}{
		{Claim{Expect: "value", Value: 2, Factor: 1.1}, 1.5},   // lhs 3 over 2
		{Claim{Expect: "ratio", Value: 3, Factor: 1.1}, 0.5},   // 3/2 over 3
		{Claim{Expect: "range", Min: 1, Max: 2, Factor: 1}, 1}, // 1.5 inside
		{Claim{Expect: "range", Min: 2, Max: 4, Factor: 1}, 0.75},
		{Claim{Expect: "similar", Factor: 1.1}, 1.5},
		{Claim{Expect: "greater"}, 0},
	}
	four, one := 4.0, 1.0
	lhs, rhs := Ref{Series: "Expected", Panel: "search", X: &four}, Ref{Series: "Expected", Panel: "search", X: &one}
	runs := map[pointKey][]Outcome{lhs.key(): {{Result: throughputResult(3)}}, rhs.key(): {{Result: throughputResult(2)}}}
	for _, tc := range cases {
		tc.c.LHS, tc.c.RHS = lhs, &rhs
		if v := evaluate(s, tc.c, runs); math.Abs(v.Quotient-tc.want) > 1e-9 {
			t.Errorf("%s claim: quotient %g, want %g (%s %s)", tc.c.Expect, v.Quotient, tc.want, v.Status, v.Reason)
		}
	}
}

// A claim on points run under several seeds is judged on the means, and
// says in how many seeds it holds, pairing the replicates seed by seed.
func TestReplicatedClaim(t *testing.T) {
	s, err := Parse("tiny.yaml", []byte(tinySpec))
	if err != nil {
		t.Fatal(err)
	}
	four, one := 4.0, 1.0
	lhs, rhs := Ref{Series: "Expected", Panel: "search", X: &four}, Ref{Series: "Expected", Panel: "search", X: &one}
	reps := func(mops ...float64) []Outcome {
		var out []Outcome
		for k, m := range mops {
			out = append(out, Outcome{Point: Point{Replicate: k}, Result: throughputResult(m)})
		}
		return out
	}
	// Per seed 3/2, 1/1, 8/5 (1.5x, 1x, 1.6x): the means 4/2.67 make 1.5x.
	runs := map[pointKey][]Outcome{lhs.key(): reps(3, 1, 8), rhs.key(): reps(2, 1, 5)}
	c := Claim{Expect: "ratio", Value: 1.5, Factor: 1.1, LHS: lhs, RHS: &rhs}
	v := evaluate(s, c, runs)
	if v.Status != Pass || math.Abs(v.Quotient-1) > 1e-9 {
		t.Errorf("status %s, quotient %g; want pass at 1 (%s)", v.Status, v.Quotient, v.Measured)
	}
	if want := "4 / 2.67 = 1.50x; means of 3 seeds, holds in 2 (per seed 1x to 1.6x)"; v.Measured != want {
		t.Errorf("measured %q, want %q", v.Measured, want)
	}
	runs[rhs.key()][1].Err = errors.New("boom")
	if v := evaluate(s, c, runs); v.Status != NoData || !strings.Contains(v.Reason, "boom") {
		t.Errorf("a failed replicate: status %s, reason %q; want no data naming the failure", v.Status, v.Reason)
	}
}

func throughputResult(mops float64) *bench.Result { return &bench.Result{ThroughputMops: mops, Ops: 1} }

func TestCombiningMetric(t *testing.T) {
	m, err := metricOf("combining.writes.p99")
	if err != nil {
		t.Fatal(err)
	}
	r := &bench.Result{Combining: &bench.Combining{Writes: bench.RoundSizes{P99: 7}}}
	if v, ok := m(r); !ok || v != 7 {
		t.Errorf("combining.writes.p99 = %g, %v; want 7", v, ok)
	}
	if _, ok := m(&bench.Result{}); ok {
		t.Error("an index without combining has a combining metric")
	}
	if _, err := metricOf("combining.writes.p98"); err == nil {
		t.Error("combining.writes.p98 accepted")
	}
}
