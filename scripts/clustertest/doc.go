// Package clustertest runs scripts/run_cluster.sh end to end on one
// machine: three network namespaces stand in for two memory hosts and a
// compute host, each with its own sshd, joined by veth pairs to a bridge
// on 198.18.0.0/15 addresses. It has only a test; the test needs root,
// ip, sshd, ssh, scp and ssh-keygen and skips, naming what is missing,
// without them or under go test -short.
package clustertest
