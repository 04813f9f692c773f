// Package rftree is RF-tree, the B-link tree that the SPREAD approach
// converts for disaggregated memory (Koo, Hwang, Park and Kim, Applied
// Sciences 13(20):11130, 2023, section 3.3), re-implemented over
// dmbench's verbs API from the paper alone: it has no public code.
package rftree
