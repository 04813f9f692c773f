// Package cost is dmbench's one table of local CPU costs. Indexes charge
// their local work with Endpoint.Compute and these functions; nothing else
// makes an index fast or slow in the simulator but the verbs it issues, the
// bytes it moves and this work.
//
// The table is global: no index and no figure gets its own values. Each
// value comes from a measurement of the project's own kernels (kernels.go,
// re-run by `dmbench calibrate`, which prints the table beside this
// machine's measurements) or from a published measurement, named beside it.
package cost
