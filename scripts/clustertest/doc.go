// Package clustertest runs scripts/run_cluster.sh end to end on one
// machine: four network namespaces stand in for two memory hosts and two
// compute hosts (one run puts every compute node in one process on the
// first, another one dmbench computenode on each), each with its own
// sshd, joined by veth pairs to a bridge on 198.18.0.0/15 addresses. It has only a test; the test needs root,
// ip, sshd, ssh, scp and ssh-keygen and skips, naming what is missing,
// without them or under go test -short.
package clustertest
