// Package plots renders dmbench's figures with gonum/plot, laid out like
// the papers' figures: one panel per workload or skew, the paper's axes and
// units, series as lines with markers (numeric x) or grouped bars
// (categorical x, percentiles), log axes where the paper uses them. Each
// figure is written as PDF, SVG and PNG.
//
// A figure is sized by its text: each panel is as wide as its x tick
// labels and titles need (labels that still collide are thinned), axis and
// panel titles wrap, the notes wrap to the figure's width, and one legend
// for the whole figure sits between the title and the panels, off the data,
// with each series in the same colour and marker in every panel.
// CheckLayout draws a figure on a canvas that records its text and reports
// any string that leaves the canvas or overlaps another.
//
// The package knows nothing of experiments or runs: it draws a Figure.
package plots
