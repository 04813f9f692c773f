#!/usr/bin/env bash
# Runs one dmbench configuration on the tcp fabric across hosts: starts a
# memory node (dmbench memnode) on every memory host over ssh, runs the
# compute role on the compute hosts, copies the result back, and stops
# everything it started. With one compute host, every compute node runs in
# one process there (dmbench run --fabric tcp); with several, each host
# runs one compute node (dmbench computenode), and they meet at a
# rendezvous the first memory node serves on its port + 1.
#
#   scripts/run_cluster.sh [options] HOSTS -- RUN-OPTIONS...
#
# e.g.
#   scripts/run_cluster.sh cluster.hosts -- --index sherman \
#       --workload dmtree-search-only --records 1000000 --ops 1000000 \
#       --compute-nodes 2 --threads 8 --memory-bytes 4GiB
#
# HOSTS has one line per role: the role (memory or compute), the ssh
# destination ([user@]host) and the address:port the role listens on and is
# reached at; # starts a comment. Memory nodes take the ids 0, 1, ... in the
# order of their lines. A single compute host needs no address; with
# several, each gives the address:port its compute node serves the others
# on, and the run's --compute-nodes is the number of compute hosts (the
# script sets it).
#
#   # role   ssh destination   address:port
#   memory   root@mem1         10.0.0.1:7400
#   memory   root@mem2         10.0.0.2:7400
#   compute  root@cn1          10.0.0.11:7500
#   compute  root@cn2          10.0.0.12:7500
#
# RUN-OPTIONS go to dmbench run unchanged, except --fabric, --memnodes,
# --key and --json, which this script sets. Each memory node runs with the
# run's --memory-cores (1 when not given).
#
# Options:
#   --dmbench FILE         dmbench binary to copy to every host (bin/dmbench)
#   --remote-dmbench PATH  use the dmbench already at PATH on every host
#                          (a shared file system) and copy no binary
#   --key FILE             cluster key (default: a fresh random key)
#   --out DIR              results root (results/cluster); each run writes
#                          DIR/<UTC time>-<pid>/: result.json, run.log and
#                          the memory nodes' logs
#   --remote-dir DIR       work folder on the hosts (/tmp/dmbench-cluster),
#                          removed at the end
#   --bytes N              memory each memory node may hold (16GiB; a bound,
#                          only what the run lays out is allocated)
#   --wait S               seconds to wait for each memory node to answer (30)
#
# Environment: SSH_OPTS, extra options for ssh and scp (both must accept
# them: -F FILE, -i KEY, -o NAME=VALUE). ssh runs in batch mode: set up key
# login first.
#
# The result is DIR/<run>/result.json, written only when the run succeeds:
# the whole run's, merged from every compute node (the first compute
# host's copy; every compute node writes the same).
# On Ctrl-C, on any failure and at the end the script stops every process
# it started and removes its files on the hosts; when something fails it
# exits non-zero with one line naming the host and role at fault.
set -euo pipefail

prog=run_cluster.sh

die() {
	echo "$prog: $*" >&2
	exit 1
}

usage() {
	sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'
}

# q quotes its argument for any POSIX shell, the remote login shell included.
q() {
	printf "'%s'" "${1//\'/\'\\\'\'}"
}

dmbench=bin/dmbench
remote_bin=
key=
out=results/cluster
remote_root=/tmp/dmbench-cluster
bytes=16GiB
wait_s=30
while [[ $# -gt 0 ]]; do
	case $1 in
	--dmbench | --remote-dmbench | --key | --out | --remote-dir | --bytes | --wait)
		[[ $# -ge 2 ]] || die "$1 needs a value"
		case $1 in
		--dmbench) dmbench=$2 ;;
		--remote-dmbench) remote_bin=$2 ;;
		--key) key=$2 ;;
		--out) out=$2 ;;
		--remote-dir) remote_root=$2 ;;
		--bytes) bytes=$2 ;;
		--wait) wait_s=$2 ;;
		esac
		shift 2
		;;
	-h | --help)
		usage
		exit 0
		;;
	-*) die "unknown option $1; see $0 --help" ;;
	*) break ;;
	esac
done
[[ $# -ge 1 ]] || die "no hosts file; usage: $0 [options] HOSTS -- RUN-OPTIONS..."
hosts_file=$1
shift
if [[ $# -gt 0 ]]; then
	[[ $1 == -- ]] || die "$1: run options go after --, e.g. $0 $hosts_file -- --index ideal --workload rftree-a"
	shift
fi
run_opts=("$@")
[[ $wait_s =~ ^[1-9][0-9]*$ ]] || die "--wait $wait_s: want a whole number of seconds"

# The memory nodes must run the handlers on as many cores as the run
# expects; the script sets the flags that say where the cluster is.
cores=
compute_nodes=
for ((i = 0; i < ${#run_opts[@]}; i++)); do
	case ${run_opts[i]} in
	--memory-cores) cores=${run_opts[i + 1]:-} ;;
	--memory-cores=*) cores=${run_opts[i]#--memory-cores=} ;;
	--compute-nodes) compute_nodes=${run_opts[i + 1]:-} ;;
	--compute-nodes=*) compute_nodes=${run_opts[i]#--compute-nodes=} ;;
	--fabric | --fabric=* | --memnodes | --memnodes=* | --key | --key=* | --json | --json=* | --rendezvous | --rendezvous=* | --listen | --listen=*)
		die "run option ${run_opts[i]%%=*}: this script sets it; leave it out" ;;
	esac
done
if [[ -z $cores ]]; then
	cores=1
	run_opts+=(--memory-cores 1)
fi
[[ $cores =~ ^[1-9][0-9]*$ ]] || die "run option --memory-cores $cores: want a positive whole number"

# Read the hosts file.
[[ -r $hosts_file ]] || die "hosts file $hosts_file: cannot read it"
mem_dest=()
mem_addr=()
compute_dests=()
compute_addr=()
n=0
while IFS= read -r line || [[ -n $line ]]; do
	n=$((n + 1))
	line=${line%%#*}
	read -r role dest addr extra <<<"$line" || true
	[[ -n ${role:-} ]] || continue
	where="hosts file $hosts_file line $n"
	[[ -z ${extra:-} ]] || die "$where: want role, ssh destination, address:port; got more: $extra"
	[[ -n ${dest:-} ]] || die "$where: $role has no ssh destination"
	case $role in
	memory)
		[[ ${addr:-} =~ ^[^:]+:[0-9]+$ || ${addr:-} =~ ^\[.*\]:[0-9]+$ ]] ||
			die "$where: memory role on $dest needs the address:port it listens on, got '${addr:-}'"
		mem_dest+=("$dest")
		mem_addr+=("$addr")
		;;
	compute)
		[[ -z ${addr:-} || ${addr:-} =~ ^[^:]+:[0-9]+$ || ${addr:-} =~ ^\[.*\]:[0-9]+$ ]] ||
			die "$where: compute role on $dest: '$addr' is not an address:port"
		compute_dests+=("$dest")
		compute_addr+=("${addr:-}")
		;;
	*) die "$where: role '$role': want memory or compute" ;;
	esac
done <"$hosts_file"
[[ ${#mem_dest[@]} -gt 0 ]] || die "hosts file $hosts_file names no memory host"
[[ ${#compute_dests[@]} -gt 0 ]] || die "hosts file $hosts_file names no compute host"
compute_dest=${compute_dests[0]}
ncompute=${#compute_dests[@]}
if [[ $ncompute -gt 1 ]]; then
	for i in "${!compute_dests[@]}"; do
		[[ -n ${compute_addr[i]} ]] ||
			die "hosts file $hosts_file: compute role on ${compute_dests[i]} needs the address:port its compute node serves the others on (there are $ncompute compute hosts)"
	done
	[[ -z $compute_nodes || $compute_nodes == "$ncompute" ]] ||
		die "run option --compute-nodes $compute_nodes: the hosts file names $ncompute compute hosts, one compute node each"
	[[ -n $compute_nodes ]] || run_opts+=(--compute-nodes "$ncompute")
fi

if [[ -z $remote_bin ]]; then
	[[ -x $dmbench ]] || die "--dmbench $dmbench: not an executable; build it with make or name it"
fi

read -ra ssh_opts <<<"${SSH_OPTS:-}"
ssh_opts=(-o BatchMode=yes -o ConnectTimeout=10 "${ssh_opts[@]}")
rssh() {
	local dest=$1
	shift
	ssh -n "${ssh_opts[@]}" "$dest" "$@"
}

run_id=$(date -u +%Y%m%dT%H%M%SZ)-$$
results=$out/$run_id
mkdir -p "$results"

# What was started, for cleanup: remote work folders (host index -> folder)
# and memory-node process ids.
dest_of=("${mem_dest[@]}" "${compute_dests[@]}")
dirs=()
mem_pid=()
compute_started=() # by compute host: the local process running its role over ssh
scratch=         # local: the generated key and ssh's control sockets

# is_memnode prints a remote command that succeeds while process $1 is
# the memory node started (not gone, not a zombie, not a reused id).
is_memnode() {
	echo "ps -p $1 -o stat=,args= 2>/dev/null | grep -v '^Z' | grep -q memnode"
}

dir_of() {
	echo "$remote_root/$run_id-h$1"
}

cleanup() {
	local rc=$?
	trap - EXIT INT TERM
	set +e
	local i d
	for i in "${!compute_started[@]}"; do
		[[ -n ${compute_started[i]} ]] || continue
		kill "${compute_started[i]}" 2>/dev/null
		d=$(dir_of $((${#mem_dest[@]} + i)))
		rssh "${compute_dests[i]}" "p=\$(cat $(q "$d/run.pid") 2>/dev/null) && kill \"\$p\" 2>/dev/null" 2>/dev/null
	done
	for i in "${!mem_pid[@]}"; do
		[[ -z ${mem_pid[i]} ]] ||
			rssh "${mem_dest[i]}" "$(is_memnode "${mem_pid[i]}") && kill ${mem_pid[i]}" 2>/dev/null
		scp -q "${ssh_opts[@]}" "${mem_dest[i]}:$(dir_of "$i")/memnode.log" "$results/memnode-$i.log" 2>/dev/null
	done
	for i in "${!dirs[@]}"; do
		rssh "${dest_of[i]}" "rm -rf $(q "${dirs[i]}")" 2>/dev/null
	done
	if [[ -n $scratch ]]; then
		for d in $(printf '%s\n' "${dest_of[@]}" | sort -u); do
			ssh "${ssh_opts[@]}" -O exit "$d" 2>/dev/null
		done
		rm -rf "$scratch"
	fi
	exit "$rc"
}
trap cleanup EXIT
trap 'echo "$prog: interrupted; stopping what it started" >&2; exit 130' INT TERM

# One ssh connection per host, reused by every later ssh and scp.
scratch=$(mktemp -d)
ssh_opts+=(-o ControlMaster=auto -o "ControlPath=$scratch/%C" -o ControlPersist=120)
if [[ -z $key ]]; then
	key=$scratch/key
	head -c 32 /dev/urandom >"$key"
fi
[[ -s $key ]] || die "--key $key: missing or empty"

# Copy the key (and the binary) to every host.
for i in "${!dest_of[@]}"; do
	dest=${dest_of[i]}
	d=$(dir_of "$i")
	role=memory
	[[ $i -lt ${#mem_dest[@]} ]] || role=compute
	rssh "$dest" "umask 077 && mkdir -p $(q "$d")" ||
		die "$role host $dest: cannot reach it over ssh or create $d there"
	dirs[i]=$d
	scp -q "${ssh_opts[@]}" "$key" "$dest:$d/key" || die "$role host $dest: cannot copy the key to $d"
	if [[ -z $remote_bin ]]; then
		scp -q "${ssh_opts[@]}" "$dmbench" "$dest:$d/dmbench" || die "$role host $dest: cannot copy $dmbench to $d"
	fi
done

bin_on() {
	if [[ -n $remote_bin ]]; then
		echo "$remote_bin"
	else
		echo "$(dir_of "$1")/dmbench"
	fi
}

# Start the memory nodes; with several compute hosts the first also serves
# their rendezvous, on its port + 1.
rendezvous=
if [[ $ncompute -gt 1 ]]; then
	rendezvous=${mem_addr[0]%:*}:$((${mem_addr[0]##*:} + 1))
fi
for i in "${!mem_dest[@]}"; do
	d=$(dir_of "$i")
	rv_opt=
	[[ $i -ne 0 || -z $rendezvous ]] || rv_opt="--rendezvous $(q "$rendezvous")"
	pid=$(rssh "${mem_dest[i]}" "cd $(q "$d") || exit 1; nohup $(q "$(bin_on "$i")") memnode --listen $(q "${mem_addr[i]}") --bytes $(q "$bytes") --cores $cores --key key $rv_opt >memnode.log 2>&1 </dev/null & echo \$!") ||
		die "memory role on ${mem_dest[i]} (${mem_addr[i]}): could not start dmbench memnode"
	[[ $pid =~ ^[0-9]+$ ]] || die "memory role on ${mem_dest[i]} (${mem_addr[i]}): starting dmbench memnode printed '$pid', not a process id"
	mem_pid[i]=$pid
done

# Wait until every memory node answers where the compute host reaches it.
for i in "${!mem_dest[@]}"; do
	host=${mem_addr[i]%:*}
	host=${host#[}
	host=${host%]}
	port=${mem_addr[i]##*:}
	probe="for _ in \$(seq $((wait_s * 5))); do if (exec 3<>/dev/tcp/$host/$port) 2>/dev/null; then exit 0; fi; sleep 0.2; done; exit 1"
	if ! rssh "$compute_dest" "bash -c $(q "$probe")"; then
		why=$(rssh "${mem_dest[i]}" "tail -n 3 $(q "$(dir_of "$i")/memnode.log")" 2>/dev/null | tr '\n' ' ')
		die "memory role on ${mem_dest[i]} (${mem_addr[i]}): does not answer from compute host $compute_dest after ${wait_s}s${why:+; its log: $why}"
	fi
done

# Run the compute role on every compute host; the first's output goes to
# the terminal and run.log, the others' to run-<i>.log.
memnodes=$(
	IFS=,
	echo "${mem_addr[*]}"
)
log_of() {
	if [[ $1 -eq 0 ]]; then echo "$results/run.log"; else echo "$results/run-$1.log"; fi
}
if [[ $ncompute -gt 1 ]]; then
	echo "$prog: ${#mem_dest[@]} memory node(s) at $memnodes; $ncompute compute nodes on ${compute_dests[*]}, meeting at $rendezvous"
else
	echo "$prog: ${#mem_dest[@]} memory node(s) at $memnodes; running on $compute_dest"
fi
for j in "${!compute_dests[@]}"; do
	d=$(dir_of $((${#mem_dest[@]} + j)))
	bin=$(q "$(bin_on $((${#mem_dest[@]} + j)))")
	if [[ $ncompute -gt 1 ]]; then
		cmd="cd $(q "$d") && echo \$\$ >run.pid && exec $bin computenode --fabric tcp --rendezvous $(q "$rendezvous") --listen $(q "${compute_addr[j]}") --wait ${wait_s}m --memnodes $(q "$memnodes") --key key --json result.json"
	else
		cmd="cd $(q "$d") && echo \$\$ >run.pid && exec $bin run --fabric tcp --memnodes $(q "$memnodes") --key key --json result.json"
	fi
	for o in "${run_opts[@]}"; do
		cmd+=" $(q "$o")"
	done
	# In the background, so that a signal runs the trap at once instead of
	# after the run: bash waits for a foreground command before trapping.
	# The ssh ends when the trap kills the remote run.
	if [[ $j -eq 0 ]]; then
		(
			set +e
			rssh "${compute_dests[j]}" "sh -c $(q "$cmd")" 2>&1 | tee "$(log_of "$j")"
			exit "${PIPESTATUS[0]}"
		) &
	else
		rssh "${compute_dests[j]}" "sh -c $(q "$cmd")" >"$(log_of "$j")" 2>&1 &
	fi
	compute_started[j]=$!
done
failed=
for j in "${!compute_dests[@]}"; do
	status=0
	wait "${compute_started[j]}" || status=$?
	compute_started[j]=
	[[ $status -eq 0 || -n $failed ]] || failed="$j $status"
done
if [[ -n $failed ]]; then
	read -r j status <<<"$failed"
	why=$(grep -v '^[[:space:]]*$' "$(log_of "$j")" | tail -n 1)
	for i in "${!mem_dest[@]}"; do
		if ! rssh "${mem_dest[i]}" "$(is_memnode "${mem_pid[i]}")" 2>/dev/null; then
			mem_pid[i]=
			die "memory role on ${mem_dest[i]} (${mem_addr[i]}) stopped during the run, and the compute role on ${compute_dests[j]} failed (exit $status): $why (logs: $results)"
		fi
	done
	die "compute role on ${compute_dests[j]} failed (exit $status): $why (log: $(log_of "$j"))"
fi
d=$(dir_of "${#mem_dest[@]}")
scp -q "${ssh_opts[@]}" "$compute_dest:$d/result.json" "$results/result.json" ||
	die "compute role on $compute_dest: the run succeeded but its result.json could not be copied back"
echo "$prog: results in $results (result.json, run*.log, memnode-*.log)"
