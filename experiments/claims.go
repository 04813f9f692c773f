package experiments

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/dmbench/dmbench/bench"
)

// Claim is a machine-checkable statement of a paper about a figure, with
// its tolerance fixed before any run.
type Claim struct {
	ID      string `yaml:"id"`
	Text    string `yaml:"text"`    // what the paper says
	Section string `yaml:"section"` // where it says it
	// Metric overrides the spec's metric for this claim.
	Metric string `yaml:"metric"`
	LHS    Ref    `yaml:"lhs"`
	RHS    *Ref   `yaml:"rhs"`
	// Expect is how lhs (and rhs) are compared:
	//   ratio    lhs/rhs within a factor Factor of Value
	//   value    lhs within a factor Factor of Value
	//   range    lhs/rhs between Min and Max, widened by Factor
	//   greater  lhs > rhs
	//   less     lhs < rhs
	//   similar  lhs/rhs within a factor Factor of 1
	//   below    lhs < Value
	//   above    lhs > Value
	Expect string  `yaml:"expect"`
	Value  float64 `yaml:"value"`
	Min    float64 `yaml:"min"`
	Max    float64 `yaml:"max"`
	Factor float64 `yaml:"within_factor"`
	Note   string  `yaml:"note"`
}

// Ref names one point of a figure: a series, a panel and an x value (or a
// category on a workload axis), and the metric read there when it is not
// the claim's (one run's dip against its level before).
type Ref struct {
	Series   string   `yaml:"series"`
	Panel    string   `yaml:"panel"`
	X        *float64 `yaml:"x"`
	Category string   `yaml:"category"`
	Metric   string   `yaml:"metric"`
}

var expects = []string{"ratio", "value", "range", "greater", "less", "similar", "below", "above"}

func (c *Claim) validate(s *Spec) error {
	var errs []error
	if c.ID == "" || c.Text == "" {
		errs = append(errs, errors.New("needs an id and the paper's text"))
	}
	if !slices.Contains(expects, c.Expect) {
		errs = append(errs, fmt.Errorf("expect %q is not one of %s", c.Expect, strings.Join(expects, ", ")))
	}
	if c.Metric != "" {
		if _, err := metricOf(c.Metric); err != nil {
			errs = append(errs, err)
		}
	}
	needRHS := !slices.Contains([]string{"value", "below", "above"}, c.Expect)
	if needRHS != (c.RHS != nil) {
		errs = append(errs, fmt.Errorf("expect %s needs rhs: %v", c.Expect, needRHS))
	}
	switch c.Expect {
	case "below", "above":
		if c.Value <= 0 {
			errs = append(errs, fmt.Errorf("expect %s needs value > 0", c.Expect))
		}
	case "ratio", "value":
		if c.Value <= 0 || c.Factor < 1 {
			errs = append(errs, fmt.Errorf("expect %s needs value > 0 and within_factor >= 1", c.Expect))
		}
	case "range":
		if c.Min <= 0 || c.Max < c.Min || c.Factor < 1 {
			errs = append(errs, errors.New("expect range needs 0 < min <= max and within_factor >= 1"))
		}
	case "similar":
		if c.Factor < 1 {
			errs = append(errs, errors.New("expect similar needs within_factor >= 1"))
		}
	}
	for _, r := range []*Ref{&c.LHS, c.RHS} {
		if r != nil {
			if err := r.validate(s); err != nil {
				errs = append(errs, err)
			}
			if r.Metric != "" {
				if _, err := metricOf(r.Metric); err != nil {
					errs = append(errs, err)
				}
			}
		}
	}
	return errors.Join(errs...)
}

func (r *Ref) validate(s *Spec) error {
	if !slices.ContainsFunc(s.Series, func(se Series) bool { return se.Label == r.Series }) {
		return fmt.Errorf("series %q is not in the spec", r.Series)
	}
	if !slices.ContainsFunc(s.Panels, func(p Panel) bool { return p.Name == r.Panel }) {
		return fmt.Errorf("panel %q is not in the spec", r.Panel)
	}
	switch {
	case s.X.Name == "time":
		if r.X != nil || r.Category != "" && r.Category != timeline {
			return errors.New("a time axis has no x values: name the run by series and panel and the number by the claim's metric")
		}
		r.Category = timeline
	case s.X.categorical():
		if !slices.Contains(s.X.Categories, r.Category) {
			return fmt.Errorf("category %q is not on the x axis", r.Category)
		}
	case r.X == nil:
		return fmt.Errorf("the reference names no x; the x axis has %v", s.X.Values)
	case !slices.Contains(s.X.Values, *r.X):
		return fmt.Errorf("x %v is not on the x axis %v", *r.X, s.X.Values)
	}
	return nil
}

func (r *Ref) key() pointKey {
	k := pointKey{panel: r.Panel, series: r.Series, x: r.Category}
	if r.X != nil {
		k.x = xLabel(*r.X)
	}
	return k
}

func (r *Ref) String() string { return r.Series + " @ " + r.Panel + ", x=" + r.key().x }

// Verdict is the outcome of one claim.
type Verdict struct {
	Claim    Claim
	Status   string // see the Status constants
	Paper    string // what the paper states, as a number or relation
	Measured string
	Reason   string
	// Quotient is the measured value over the paper's number (for a range,
	// over its nearer bound; 1 inside it): how far the run is from the
	// paper, whatever the tolerance. It is 0 for claims without a number
	// (greater, less, below, above) and for claims not evaluated.
	Quotient float64
}

// Off reports how far the quotient is from 1 as a factor >= 1 (1.25 for
// both 0.8 and 1.25), and false when the claim has no quotient.
func (v Verdict) Off() (float64, bool) {
	if v.Quotient <= 0 || math.IsInf(v.Quotient, 0) || math.IsNaN(v.Quotient) {
		return 0, false
	}
	return max(v.Quotient, 1/v.Quotient), true
}

// Claim statuses.
const (
	Pass       = "pass"
	Missed     = "MISSED"
	Missing    = "missing index"
	NeedsInput = "needs input"
	NotAtScale = "not at this scale"
	NoData     = "no data"
)

// Evaluate checks every claim of s against the runs. A point run under
// several seeds (Replicates) counts by the mean over its replicates, and
// the measured value says in how many of the seeds the claim holds.
func Evaluate(s *Spec, runs map[pointKey][]Outcome) []Verdict {
	var out []Verdict
	for _, c := range s.Claims {
		out = append(out, evaluate(s, c, runs))
	}
	return out
}

func evaluate(s *Spec, c Claim, runs map[pointKey][]Outcome) Verdict {
	v := Verdict{Claim: c, Paper: c.paperValue()}
	// get reads the claim's metric off each replicate of a point.
	get := func(r *Ref) ([]float64, bool) {
		name := cmp.Or(r.Metric, c.Metric)
		m, _ := metricOf(name)
		if name == "" {
			name = s.metricName(r.Panel, r.Category)
			m, _ = s.metricFor(r.Panel, r.Category) // validated
		}
		reps, ok := runs[r.key()]
		if !ok {
			v.Status, v.Reason = NotAtScale, r.String()+" is not run at this scale"
			return nil, false
		}
		xs := make([]float64, 0, len(reps))
		for _, o := range reps {
			switch {
			case o.Missing != "":
				v.Status, v.Reason = Missing, o.Missing
			case o.NeedsInput != "" && o.Result == nil:
				v.Status, v.Reason = NeedsInput, o.NeedsInput
			case o.Err != nil:
				v.Status, v.Reason = NoData, fmt.Sprintf("%s failed: %v", r, o.Err)
			case o.Result == nil:
				v.Status, v.Reason = NoData, r.String()+" has no result"
			default:
				x, ok := m(o.Result)
				if !ok {
					v.Status, v.Reason = NoData, fmt.Sprintf("%s has no %s", r, name)
					return nil, false
				}
				xs = append(xs, x)
				continue
			}
			return nil, false
		}
		return xs, true
	}
	lhs, ok := get(&c.LHS)
	if !ok {
		return v
	}
	var rhs []float64
	if c.RHS != nil && !c.oneSided() {
		if rhs, ok = get(c.RHS); !ok {
			return v
		}
	}
	v.Status, v.Measured, v.Quotient = c.judge(mean(lhs), mean(rhs))
	if len(lhs) > 1 {
		v.Measured += c.perSeed(lhs, rhs)
	}
	return v
}

// oneSided reports a claim on the lhs alone.
func (c *Claim) oneSided() bool {
	return c.Expect == "value" || c.Expect == "below" || c.Expect == "above"
}

// judge checks the claim on one lhs (and rhs): its status, the measured
// value as the claims tables show it, and the quotient.
func (c *Claim) judge(lhs, rhs float64) (status, measured string, quotient float64) {
	if c.oneSided() {
		if c.Expect == "value" {
			quotient = lhs / c.Value
		}
		return verdict(c.Expect == "value" && within(lhs, c.Value, c.Factor) ||
			c.Expect == "below" && lhs < c.Value || c.Expect == "above" && lhs > c.Value), fmt.Sprintf("%.3g", lhs), quotient
	}
	ratio := math.Inf(1)
	if rhs != 0 {
		ratio = lhs / rhs
	}
	measured = fmt.Sprintf("%.3g / %.3g = %.2fx", lhs, rhs, ratio)
	switch c.Expect {
	case "ratio":
		return verdict(within(ratio, c.Value, c.Factor)), measured, ratio / c.Value
	case "range":
		quotient = 1
		if ratio < c.Min {
			quotient = ratio / c.Min
		} else if ratio > c.Max {
			quotient = ratio / c.Max
		}
		return verdict(ratio >= c.Min/c.Factor && ratio <= c.Max*c.Factor), measured, quotient
	case "greater":
		return verdict(lhs > rhs), measured, 0
	case "less":
		return verdict(lhs < rhs), measured, 0
	default: // similar
		return verdict(within(ratio, 1, c.Factor)), measured, ratio
	}
}

// perSeed says, for a claim on replicated points, over how many seeds
// the means were taken, in how many the claim holds on its own, and the
// range of the value it compares (the lhs, or the ratio) across seeds.
// Replicate k of the lhs is paired with replicate k of the rhs: the same
// seeds.
func (c *Claim) perSeed(lhs, rhs []float64) string {
	n := len(lhs)
	if !c.oneSided() {
		n = min(n, len(rhs))
	}
	holds, lo, hi := 0, math.Inf(1), math.Inf(-1)
	for k := range n {
		x, r := lhs[k], 0.0
		if !c.oneSided() {
			r = rhs[k]
		}
		if st, _, _ := c.judge(x, r); st == Pass {
			holds++
		}
		if !c.oneSided() {
			x = math.Inf(1)
			if r != 0 {
				x = lhs[k] / r
			}
		}
		lo, hi = min(lo, x), max(hi, x)
	}
	unit := ""
	if !c.oneSided() {
		unit = "x"
	}
	return fmt.Sprintf("; means of %d seeds, holds in %d (per seed %.3g%s to %.3g%s)", n, holds, lo, unit, hi, unit)
}

// mean is the mean of xs, 0 for none.
func mean(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	var sum float64
	for _, x := range xs {
		sum += x
	}
	return sum / float64(len(xs))
}

// Closeness counts, among verdicts with a quotient, how many lie within
// each of the factors of the paper's number.
type Closeness struct {
	Factors []float64
	Within  []int
	Of      int // verdicts with a quotient
}

// closenessFactors are the bands the claims summaries report.
var closenessFactors = []float64{1.1, 1.25, 1.5}

// Close tallies vs against closenessFactors.
func Close(vs []Verdict) Closeness {
	c := Closeness{Factors: closenessFactors, Within: make([]int, len(closenessFactors))}
	for _, v := range vs {
		off, ok := v.Off()
		if !ok {
			continue
		}
		c.Of++
		for i, f := range c.Factors {
			if off <= f*(1+1e-9) {
				c.Within[i]++
			}
		}
	}
	return c
}

// String is the summary's second half: "of 12 claims with a number, 3
// within 1.1x, 5 within 1.25x, 8 within 1.5x of the paper".
func (c Closeness) String() string {
	parts := make([]string, len(c.Factors))
	for i, f := range c.Factors {
		parts[i] = fmt.Sprintf("%d within %gx", c.Within[i], f)
	}
	return fmt.Sprintf("of %d with a number, %s of the paper", c.Of, strings.Join(parts, ", "))
}

// formatQuotient is the quotient as the claims tables show it.
func formatQuotient(v Verdict) string {
	if _, ok := v.Off(); !ok {
		return ""
	}
	return fmt.Sprintf("%.2f", v.Quotient)
}

func within(x, want, factor float64) bool { return x >= want/factor && x <= want*factor }

func verdict(ok bool) string {
	if ok {
		return Pass
	}
	return Missed
}

// paperValue is the claim's expectation as the claims table shows it.
func (c *Claim) paperValue() string {
	switch c.Expect {
	case "ratio":
		return fmt.Sprintf("%gx (within %gx)", c.Value, c.Factor)
	case "value":
		return fmt.Sprintf("%g (within %gx)", c.Value, c.Factor)
	case "range":
		return fmt.Sprintf("%g-%gx (widened %gx)", c.Min, c.Max, c.Factor)
	case "greater":
		return "lhs > rhs"
	case "less":
		return "lhs < rhs"
	case "below":
		return fmt.Sprintf("< %g", c.Value)
	case "above":
		return fmt.Sprintf("> %g", c.Value)
	default:
		return fmt.Sprintf("similar (within %gx)", c.Factor)
	}
}

// resultOf is a helper for reports: the first replicate's run of a
// point, if any.
func resultOf(runs map[pointKey][]Outcome, k pointKey) *bench.Result {
	if reps := runs[k]; len(reps) > 0 {
		return reps[0].Result
	}
	return nil
}
