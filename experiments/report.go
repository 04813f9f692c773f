package experiments

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"github.com/dmbench/dmbench/bench"
	"github.com/dmbench/dmbench/internal/atomicfile"
	"github.com/dmbench/dmbench/plots"
)

// Report is what a reproduced figure produced.
type Report struct {
	Spec     *Spec
	Scale    string
	Outcomes []Outcome
	Verdicts []Verdict
	// Missing lists the series whose index is not implemented yet.
	Missing []string
	// Inputs lists, once each, the input files that points without a
	// result need (NeedsInput).
	Inputs []string
	// Files are the outputs written.
	Files []string
	// Replicates is how many seeds each point ran under (Replicates).
	Replicates int
}

// Base is the output path of a figure without extension:
// <dir>/<paper>/<figure>.
func Base(dir string, s *Spec) string { return filepath.Join(dir, filepath.FromSlash(s.ID)) }

// NewReport evaluates the claims over outcomes.
func NewReport(s *Spec, scale string, outs []Outcome) *Report {
	r := &Report{Spec: s, Scale: scale, Outcomes: outs, Verdicts: Evaluate(s, Index(outs)), Replicates: 1}
	for _, o := range outs {
		r.Replicates = max(r.Replicates, o.Replicate+1)
	}
	for _, se := range s.Series {
		for _, o := range outs {
			if o.Series == se.Label && o.Missing != "" {
				r.Missing = append(r.Missing, fmt.Sprintf("%s (%s)", se.Label, se.Index))
				break
			}
		}
	}
	for _, o := range outs {
		if o.NeedsInput != "" && o.Result == nil && !slices.Contains(r.Inputs, o.NeedsInput) {
			r.Inputs = append(r.Inputs, o.NeedsInput)
		}
	}
	return r
}

// Write writes the figure (PDF, SVG, PNG, unless the spec is a table),
// the CSV of every run and the claims table (Markdown and CSV) next to
// each other under dir.
func (r *Report) Write(dir string) error {
	base := Base(dir, r.Spec)
	if r.Spec.Plot == "table" {
		if err := atomicfile.Write(base+".md", []byte(r.TableMarkdown())); err != nil {
			return err
		}
		r.Files = append(r.Files, base+".md")
	} else {
		if err := r.Figure().Save(base); err != nil {
			return fmt.Errorf("%s: %w", r.Spec.ID, err)
		}
		r.Files = append(r.Files, base+".pdf", base+".svg", base+".png")
	}
	if err := r.writeRuns(base + ".csv"); err != nil {
		return err
	}
	if err := atomicfile.Write(base+".claims.md", []byte(r.ClaimsMarkdown())); err != nil {
		return err
	}
	if err := r.writeClaimsCSV(base + ".claims.csv"); err != nil {
		return err
	}
	r.Files = append(r.Files, base+".csv", base+".claims.md", base+".claims.csv")
	return nil
}

// Figure lays the runs out as the paper's figure.
func (r *Report) Figure() *plots.Figure {
	s := r.Spec
	f := &plots.Figure{
		Title: fmt.Sprintf("%s %s: %s", paperName(s.Paper), s.Figure, s.Title), XLabel: s.X.Label, YLabel: s.YLabel,
		LogX: s.X.LogX, LogY: s.LogY, Kind: plots.Lines,
	}
	if s.X.categorical() || s.Plot == "bars" || s.Plot == "percentiles" {
		f.Kind = plots.Bars
	}
	runs := Index(r.Outcomes)
	var changes []string // what the runner did during a timeline's runs
	for _, pn := range s.Panels {
		panel := plots.Panel{Title: pn.Title, YLabel: pn.YLabel}
		if s.X.Name == "time" {
			panel, notes := r.timelinePanel(panel, pn, runs)
			f.Panels, changes = append(f.Panels, panel), append(changes, notes...)
			continue
		}
		xs := r.xs()
		if f.Kind == plots.Bars {
			panel.Categories = xs
		}
		for _, se := range s.Series {
			series := plots.Series{Label: se.Label}
			present := false
			for _, x := range xs {
				m, _ := s.metricFor(pn.Name, x) // validated
				y, lo, hi := replicated(runs[pointKey{pn.Name, se.Label, x}], m)
				present = present || !math.IsNaN(y)
				if f.Kind == plots.Lines {
					var xv float64
					fmt.Sscan(x, &xv)
					series.X = append(series.X, xv)
				}
				series.Y = append(series.Y, y)
				if r.Replicates > 1 {
					series.Lo, series.Hi = append(series.Lo, lo), append(series.Hi, hi)
				}
			}
			if present {
				panel.Series = append(panel.Series, series)
			}
		}
		f.Panels = append(f.Panels, panel)
	}
	sc := s.Scales[r.Scale]
	length := count(sc.Ops) + " operations"
	if sc.MaxMs > 0 {
		length = fmt.Sprintf("%s operations or %g ms of virtual time, whichever ends first,", count(sc.Ops), sc.MaxMs)
	}
	f.Notes = append(f.Notes, fmt.Sprintf("dmbench, sim fabric, profile %s, scale %s: %s records, %s per point (paper-sized caches scaled by records)",
		s.Profile, r.Scale, count(sc.Records), length))
	if r.Replicates > 1 {
		spread := "whiskers span the lowest and highest seed"
		if s.X.Name == "time" {
			spread = "the first seed's windows"
		}
		f.Notes = append(f.Notes, fmt.Sprintf("each point is the mean of %d seeds; %s", r.Replicates, spread))
	}
	if len(r.Missing) > 0 {
		f.Notes = append(f.Notes, "missing (index not implemented yet): "+strings.Join(r.Missing, ", "))
	}
	for _, in := range r.Inputs {
		f.Notes = append(f.Notes, "needs input: "+in)
	}
	f.Notes = append(f.Notes, changes...)
	f.Notes = append(f.Notes, s.Notes...)
	return f
}

// timelinePanel draws each series' throughput window by window, at the
// windows' midpoints in ms, and returns notes on when the runner changed
// the cluster.
func (r *Report) timelinePanel(panel plots.Panel, pn Panel, runs map[pointKey][]Outcome) (plots.Panel, []string) {
	var notes []string
	for _, se := range r.Spec.Series {
		res := resultOf(runs, pointKey{pn.Name, se.Label, timeline})
		if res == nil || len(res.Timeline) == 0 {
			continue
		}
		series := plots.Series{Label: se.Label}
		for _, w := range res.Timeline {
			series.X = append(series.X, float64(w.StartNs+w.EndNs)/2/1e6)
			series.Y = append(series.Y, w.Mops)
		}
		panel.Series = append(panel.Series, series)
		for _, c := range res.Changes {
			notes = append(notes, fmt.Sprintf("%s, %s: %s from %.4g ms to %.4g ms (%s)",
				pn.Title, se.Label, c.Name, float64(c.StartNs)/1e6, float64(c.EndNs)/1e6, c.Detail))
		}
	}
	return panel, notes
}

// replicated is a metric over a point's replicates that have it: the
// mean, lowest and highest; NaN when none has it.
func replicated(reps []Outcome, m metric) (avg, lo, hi float64) {
	var vs []float64
	for _, o := range reps {
		if o.Result == nil {
			continue
		}
		if v, ok := m(o.Result); ok {
			vs = append(vs, v)
		}
	}
	if len(vs) == 0 {
		return math.NaN(), math.NaN(), math.NaN()
	}
	return mean(vs), slices.Min(vs), slices.Max(vs)
}

// TableMarkdown lays the figure's numbers out as the paper's table: one
// row per panel and series, one column per x value.
func (r *Report) TableMarkdown() string {
	f := r.Figure()
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n", f.Title)
	xs := r.xs()
	b.WriteString("| panel | series | " + strings.Join(xs, " | ") + " |\n|---|---|" + strings.Repeat("---|", len(xs)) + "\n")
	for i, pn := range f.Panels {
		for _, se := range pn.Series {
			cells := make([]string, len(se.Y))
			for j, y := range se.Y {
				switch {
				case math.IsNaN(y):
					cells[j] = "-"
				case se.Lo != nil:
					cells[j] = fmt.Sprintf("%.4g (%.4g-%.4g)", y, se.Lo[j], se.Hi[j])
				default:
					cells[j] = fmt.Sprintf("%.4g", y)
				}
			}
			fmt.Fprintf(&b, "| %s | %s | %s |\n", r.Spec.Panels[i].Title, se.Label, strings.Join(cells, " | "))
		}
	}
	for _, n := range f.Notes {
		fmt.Fprintf(&b, "\n%s\n", n)
	}
	return b.String()
}

// xs are the x labels of the runs, in axis order.
func (r *Report) xs() []string {
	var xs []string
	for _, o := range r.Outcomes {
		if x := o.XLabel(); !slices.Contains(xs, x) {
			xs = append(xs, x)
		}
	}
	return xs
}

func count(n int64) string {
	switch {
	case n >= 1e6 && n%1e5 == 0:
		return fmt.Sprintf("%gM", float64(n)/1e6)
	case n >= 1e3 && n%100 == 0:
		return fmt.Sprintf("%gK", float64(n)/1e3)
	}
	return fmt.Sprint(n)
}

func paperName(p string) string {
	return map[string]string{"dex": "DEX (VLDB'24)", "dmtree": "DMTree (FAST'26)", "rftree": "RF-tree (Appl. Sci. '23)", "dolphin": "Dolphin"}[p]
}

// writeRuns writes one CSV row per run: the point, then bench's columns.
func (r *Report) writeRuns(path string) error {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	w.Write(append([]string{"figure", "scale", "panel", "series", "x", "status"}, bench.CSVHeader()...))
	for _, o := range r.Outcomes {
		row := []string{r.Spec.ID, r.Scale, o.Panel, o.Series, o.XLabel()}
		switch {
		case o.Missing != "":
			row = append(row, "missing: "+o.Missing)
		case o.NeedsInput != "" && o.Result == nil:
			row = append(row, "needs input: "+o.NeedsInput)
		case o.Err != nil:
			row = append(row, "failed: "+o.Err.Error())
		case o.Result == nil:
			row = append(row, "not run")
		default:
			row = append(row, "ok")
			row = append(row, o.Result.CSVRow()...)
		}
		w.Write(row)
	}
	w.Flush()
	if err := w.Error(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return atomicfile.Write(path, b.Bytes())
}

// ClaimsMarkdown is the claims table: per claim the paper's statement,
// its value, the measured value, the tolerance and the verdict.
func (r *Report) ClaimsMarkdown() string {
	var b strings.Builder
	s := r.Spec
	fmt.Fprintf(&b, "# %s %s — claims (scale %s)\n\n", paperName(s.Paper), s.Figure, r.Scale)
	fmt.Fprintf(&b, "%s. Section %s. Profile %s.\n\n", s.Title, s.Section, s.Profile)
	if len(r.Missing) > 0 {
		fmt.Fprintf(&b, "Missing series (index not implemented yet): %s.\n\n", strings.Join(r.Missing, ", "))
	}
	for _, in := range r.Inputs {
		fmt.Fprintf(&b, "Needs input: %s.\n\n", in)
	}
	b.WriteString("| claim | section | the paper says | expected | measured | measured/expected | result |\n|---|---|---|---|---|---|---|\n")
	for _, v := range r.Verdicts {
		measured := v.Measured
		if v.Reason != "" {
			measured = v.Reason
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s |\n", v.Claim.ID, v.Claim.Section, mdEscape(v.Claim.Text), v.Paper, mdEscape(measured), formatQuotient(v), v.Status)
	}
	fmt.Fprintf(&b, "\n%s.\n", r.Summary())
	return b.String()
}

// Summary is the claims tally in one line: passed, missed, not evaluated,
// and how close the claims with a number came to the paper.
func (r *Report) Summary() string {
	pass, missed, open := r.Tally()
	return fmt.Sprintf("%d passed, %d missed, %d not evaluated; %s", pass, missed, open, Close(r.Verdicts))
}

// Tally counts the verdicts: passed, missed, and not evaluated (missing
// index, needs input, not at this scale, no data).
func (r *Report) Tally() (pass, missed, open int) {
	for _, v := range r.Verdicts {
		switch v.Status {
		case Pass:
			pass++
		case Missed:
			missed++
		default:
			open++
		}
	}
	return
}

func mdEscape(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

func (r *Report) writeClaimsCSV(path string) error {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	w.Write([]string{"figure", "scale", "claim", "section", "text", "expected", "measured", "measured_over_expected", "result", "reason"})
	for _, v := range r.Verdicts {
		w.Write([]string{r.Spec.ID, r.Scale, v.Claim.ID, v.Claim.Section, v.Claim.Text, v.Paper, v.Measured, formatQuotient(v), v.Status, v.Reason})
	}
	w.Flush()
	if err := w.Error(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return atomicfile.Write(path, b.Bytes())
}
