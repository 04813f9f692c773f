// Package plots renders dmbench's figures with gonum/plot, laid out like
// the papers' figures: one panel per workload or skew, the paper's axes and
// units, series as lines with markers (numeric x) or grouped bars
// (categorical x, percentiles), log axes where the paper uses them. Each
// figure is written as PDF, SVG and PNG.
//
// The package knows nothing of experiments or runs: it draws a Figure.
package plots
