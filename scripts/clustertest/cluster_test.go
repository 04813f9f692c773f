package clustertest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// memPort is where every memory node listens, each in its own namespace,
// and computePort where compute nodes in processes of their own do.
const (
	memPort     = 7400
	computePort = 7500
)

// runOpts is the configuration both fabrics run: one client, so the verbs
// an operation issues do not depend on timing and must match sim's.
var runOpts = []string{"--index", "ideal", "--workload", "rftree-a", "--warmup", "0",
	"--compute-nodes", "1", "--threads", "1", "--coroutines", "1",
	"--records", "2000", "--memory-bytes", "32MiB", "--seed", "7"}

// result is the part of a dmbench result JSON the test checks.
type result struct {
	Index          string                        `json:"index"`
	Fabric         string                        `json:"fabric"`
	ThroughputMops float64                       `json:"throughput_mops"`
	Ops            int64                         `json:"ops"`
	VerbsPerOp     map[string]map[string]float64 `json:"verbs_per_op"`
}

func TestRunCluster(t *testing.T) {
	tools := needTools(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	t.Cleanup(cancel)
	c := newCluster(ctx, t, tools)
	bin := filepath.Join(c.dir, "dmbench")
	build := exec.CommandContext(ctx, tools["go"], "build", "-o", bin, "./cmd/dmbench")
	build.Dir = filepath.Join("..", "..")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/dmbench: %v\n%s", err, out)
	}

	t.Run("result", func(t *testing.T) {
		out := filepath.Join(c.dir, "results-ok")
		r := c.start(ctx, t, bin, out, "--ops", "4000")
		if err := r.wait(); err != nil {
			t.Fatalf("run_cluster.sh: %v\nstdout:\n%s\nstderr:\n%s", err, &r.stdout, &r.stderr)
		}
		tcp := c.compareSim(ctx, t, bin, out, r, "sim.json", append([]string{"--ops", "4000"}, runOpts...))
		if tcp.Index != "ideal" || tcp.Fabric != "tcp" || tcp.Ops != 4000 || !(tcp.ThroughputMops > 0) {
			t.Errorf("result: index %q fabric %q ops %d throughput %v Mops; want ideal on tcp, 4000 ops, a positive throughput",
				tcp.Index, tcp.Fabric, tcp.Ops, tcp.ThroughputMops)
		}
		t.Logf("%d memory hosts + 1 compute host over ssh: %s on tcp, %.4f Mops, verbs/op %v (sim: the same)",
			len(c.mem), tcp.Index, tcp.ThroughputMops, tcp.VerbsPerOp)
		c.checkStopped(t)
	})

	t.Run("compute nodes on two hosts", func(t *testing.T) {
		out := filepath.Join(c.dir, "results-two")
		opts := []string{"--index", "sherman", "--workload", "dmtree-search-only", "--warmup", "0",
			"--threads", "1", "--coroutines", "1", "--records", "2000", "--ops", "4000", "--memory-bytes", "32MiB", "--seed", "7"}
		r := c.startOn(ctx, t, bin, out, c.hosts2, opts)
		if err := r.wait(); err != nil {
			t.Fatalf("run_cluster.sh: %v\nstdout:\n%s\nstderr:\n%s", err, &r.stdout, &r.stderr)
		}
		tcp := c.compareSim(ctx, t, bin, out, r, "sim-two.json", append([]string{"--compute-nodes", "2"}, opts...))
		if tcp.Index != "sherman" || tcp.Fabric != "tcp" || tcp.Ops != 4000 {
			t.Errorf("result: index %q fabric %q ops %d; want sherman on tcp, 4000 ops from both compute nodes", tcp.Index, tcp.Fabric, tcp.Ops)
		}
		t.Logf("%d memory hosts + %d compute hosts, one dmbench computenode each: %s on tcp, %.4f Mops, verbs/op %v (sim: the same)",
			len(c.mem), len(c.computes), tcp.Index, tcp.ThroughputMops, tcp.VerbsPerOp)
		c.checkStopped(t)
	})

	t.Run("compute node killed", func(t *testing.T) {
		out := filepath.Join(c.dir, "results-compute-fault")
		opts := []string{"--index", "sherman", "--workload", "dmtree-search-only", "--warmup", "0",
			"--threads", "1", "--coroutines", "1", "--records", "2000", "--ops", "50000000", "--memory-bytes", "32MiB"}
		r := c.startOn(ctx, t, bin, out, c.hosts2, opts)
		victim := c.computes[1]
		if err := c.waitFor(ctx, r, victim, "computenode\x00"); err != nil {
			t.Fatalf("%v\nstdout:\n%s\nstderr:\n%s", err, &r.stdout, &r.stderr)
		}
		killed := false
		for _, p := range nsProcs(victim.ns) {
			if strings.Contains(p.cmdline, "computenode\x00") {
				killed = syscall.Kill(p.pid, syscall.SIGKILL) == nil
			}
		}
		if !killed {
			t.Fatalf("no dmbench computenode to kill on %s", victim.ip)
		}
		start := time.Now()
		err := r.wait()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() == 0 {
			t.Fatalf("run_cluster.sh after the compute node on %s was killed: %v, want a non-zero exit\nstderr:\n%s", victim.ip, err, &r.stderr)
		}
		// The survivor learns at once that its peer is gone, not at --wait.
		if d := time.Since(start); d > 30*time.Second {
			t.Errorf("run_cluster.sh took %v to fail after the kill", d)
		}
		if files := jsonFiles(out); len(files) > 0 {
			t.Errorf("a failed run left result files: %v", files)
		}
		t.Logf("exit %d after %v: %s", exit.ExitCode(), time.Since(start).Round(time.Millisecond), strings.TrimSpace(r.stderr.String()))
		c.checkStopped(t)
	})

	t.Run("interrupted", func(t *testing.T) {
		out := filepath.Join(c.dir, "results-interrupted")
		r := c.start(ctx, t, bin, out, "--ops", "50000000")
		if err := c.waitRun(ctx, r); err != nil {
			t.Fatalf("%v\nstdout:\n%s\nstderr:\n%s", err, &r.stdout, &r.stderr)
		}
		// What Ctrl-C does to the script (ssh ignores it in the background).
		if err := r.cmd.Process.Signal(os.Interrupt); err != nil {
			t.Fatal(err)
		}
		err := r.wait()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 130 {
			t.Errorf("run_cluster.sh after SIGINT: %v, want exit status 130\nstderr:\n%s", err, &r.stderr)
		}
		if files := jsonFiles(out); len(files) > 0 {
			t.Errorf("an interrupted run left result files: %v", files)
		}
		c.checkStopped(t)
	})

	t.Run("memory node killed", func(t *testing.T) {
		out := filepath.Join(c.dir, "results-fault")
		// Far more operations than can finish before the kill.
		r := c.start(ctx, t, bin, out, "--ops", "50000000")
		victim := c.mem[0]
		if err := c.killMidRun(ctx, victim, r); err != nil {
			t.Fatalf("%v\nstdout:\n%s\nstderr:\n%s", err, &r.stdout, &r.stderr)
		}
		err := r.wait()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() == 0 {
			t.Fatalf("run_cluster.sh after the memory node on %s was killed: %v, want a non-zero exit\nstderr:\n%s", victim.addr, err, &r.stderr)
		}
		msg := strings.TrimSpace(r.stderr.String())
		if want := fmt.Sprintf("memory role on root@%s (%s:%d)", victim.ip, victim.ip, memPort); !strings.Contains(msg, want) {
			t.Errorf("run_cluster.sh's message does not name %q:\n%s", want, msg)
		}
		logs, _ := filepath.Glob(filepath.Join(out, "*", "run.log"))
		if len(logs) != 1 {
			t.Fatalf("want one run.log under %s, found %v", out, logs)
		}
		runLog, _ := os.ReadFile(logs[0])
		if want := fmt.Sprintf("%s:%d", victim.ip, memPort); !strings.Contains(string(runLog), want) {
			t.Errorf("dmbench run's error does not name the memory node at %s:\n%s", want, runLog)
		}
		if files := jsonFiles(out); len(files) > 0 {
			t.Errorf("a failed run left result files: %v", files)
		}
		t.Logf("exit %d: %s", exit.ExitCode(), msg)
		c.checkStopped(t)
	})
}

// needTools skips the test, naming what is missing, unless it can build
// a cluster of namespaces; it returns the tools' paths.
func needTools(t *testing.T) map[string]string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds network namespaces with sshd and runs dmbench across them; skipped under -short")
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root to create network namespaces and run sshd")
	}
	tools := map[string]string{}
	var missing []string
	for _, name := range []string{"ip", "sshd", "ssh", "scp", "ssh-keygen", "bash", "go"} {
		p, err := exec.LookPath(name)
		if err != nil && name == "sshd" {
			p, err = "/usr/sbin/sshd", nil
			if _, serr := os.Stat(p); serr != nil {
				err = serr
			}
		}
		if err != nil {
			missing = append(missing, name)
			continue
		}
		tools[name] = p
	}
	if len(missing) > 0 {
		t.Skipf("needs %s (openssh-server for sshd, openssh-client for ssh, iproute2 for ip)", strings.Join(missing, ", "))
	}
	if p, err := exec.LookPath("tc"); err == nil {
		tools["tc"] = p
	}
	return tools
}

// host is one namespace standing in for a host.
type host struct {
	ns, veth, ip string
	addr         string // where its memory node listens
}

// cluster is the namespaces, their sshds and the files the script reads.
type cluster struct {
	dir     string
	mem     []host
	compute host
	// computes are the compute hosts of the multi-process runs: compute
	// and one more.
	computes  []host
	hosts     string // hosts file: every compute node in one process on compute
	hosts2    string // hosts file: one compute node on each of computes
	sshConfig string
	remote    string // the script's --remote-dir
}

// newCluster builds two memory hosts and two compute hosts, each a network
// namespace with an sshd on its own 198.18.x.0/24 address, and removes
// them all when the test ends, whatever happened.
func newCluster(ctx context.Context, t *testing.T, tools map[string]string) *cluster {
	t.Helper()
	var id [3]byte
	if _, err := rand.Read(id[:]); err != nil {
		t.Fatal(err)
	}
	tag := fmt.Sprintf("%02x%02x", id[0], id[1])
	// A random /24 of the benchmarking range, so concurrent runs do not clash.
	net := fmt.Sprintf("198.18.%d.", 1+int(id[2])%250)
	c := &cluster{dir: t.TempDir()}
	c.remote = filepath.Join(c.dir, "remote")
	bridge := "dmb" + tag
	var sshds []*exec.Cmd
	var made []string // namespaces created
	bridgeMade := false
	t.Cleanup(func() {
		for _, cmd := range sshds {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
		for _, ns := range made {
			for _, p := range nsProcs(ns) {
				_ = syscall.Kill(p.pid, syscall.SIGKILL)
			}
		}
		for _, ns := range made {
			if out, err := exec.Command("ip", "netns", "del", ns).CombinedOutput(); err != nil {
				t.Errorf("ip netns del %s: %v %s", ns, err, out)
			}
		}
		if bridgeMade {
			if out, err := exec.Command("ip", "link", "del", bridge).CombinedOutput(); err != nil {
				t.Errorf("ip link del %s: %v %s", bridge, err, out)
			}
		}
	})
	run := func(name string, args ...string) {
		t.Helper()
		if out, err := exec.CommandContext(ctx, name, args...).CombinedOutput(); err != nil {
			t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
		}
	}

	all := make([]host, 4)
	for i := range all {
		all[i] = host{ns: fmt.Sprintf("dmbench-%s-h%d", tag, i), veth: fmt.Sprintf("dmb%sh%d", tag, i), ip: fmt.Sprintf("%s%d", net, 11+i)}
		all[i].addr = fmt.Sprintf("%s:%d", all[i].ip, memPort)
	}
	for i, h := range all {
		if out, err := exec.CommandContext(ctx, "ip", "netns", "add", h.ns).CombinedOutput(); err != nil {
			if i == 0 {
				t.Skipf("cannot create network namespaces here: ip netns add: %v %s", err, out)
			}
			t.Fatalf("ip netns add %s: %v %s", h.ns, err, out)
		}
		made = append(made, h.ns)
	}
	run("ip", "link", "add", bridge, "type", "bridge")
	bridgeMade = true
	run("ip", "addr", "add", net+"1/24", "dev", bridge)
	run("ip", "link", "set", bridge, "up")
	for _, h := range all {
		run("ip", "link", "add", h.veth, "type", "veth", "peer", "name", "eth0", "netns", h.ns)
		run("ip", "link", "set", h.veth, "master", bridge, "up")
		run("ip", "-n", h.ns, "addr", "add", h.ip+"/24", "dev", "eth0")
		run("ip", "-n", h.ns, "link", "set", "eth0", "up")
		run("ip", "-n", h.ns, "link", "set", "lo", "up")
	}
	c.mem, c.compute, c.computes = all[:2], all[2], all[2:]
	if tc := tools["tc"]; tc != "" {
		// The second memory host sits behind a 1 Gbit/s link.
		run(tc, "qdisc", "add", "dev", c.mem[1].veth, "root", "tbf", "rate", "1gbit", "burst", "256kb", "latency", "50ms")
	}

	// Throwaway keys: one host key for every sshd, one client key.
	hostKey, clientKey := filepath.Join(c.dir, "host_key"), filepath.Join(c.dir, "id")
	for _, k := range []string{hostKey, clientKey} {
		run(tools["ssh-keygen"], "-q", "-t", "ed25519", "-N", "", "-C", "dmbench-clustertest", "-f", k)
	}
	pubHost, err := os.ReadFile(hostKey + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	var known strings.Builder
	var hosts strings.Builder
	for _, h := range all {
		fmt.Fprintf(&known, "%s %s", h.ip, pubHost)
	}
	for _, h := range c.mem {
		fmt.Fprintf(&hosts, "memory root@%s %s\n", h.ip, h.addr)
	}
	hosts2 := hosts.String()
	fmt.Fprintf(&hosts, "# compute nodes run in one process\ncompute root@%s\n", c.compute.ip)
	hosts2 += "# one compute node per host, each serving the others on port 7500\n"
	for _, h := range c.computes {
		hosts2 += fmt.Sprintf("compute root@%s %s:%d\n", h.ip, h.ip, computePort)
	}
	c.hosts = filepath.Join(c.dir, "hosts")
	c.hosts2 = filepath.Join(c.dir, "hosts2")
	c.sshConfig = filepath.Join(c.dir, "ssh_config")
	sshdConfig := filepath.Join(c.dir, "sshd_config")
	authorized := filepath.Join(c.dir, "authorized_keys")
	pubClient, err := os.ReadFile(clientKey + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		authorized:                          string(pubClient),
		filepath.Join(c.dir, "known_hosts"): known.String(),
		c.hosts:                             hosts.String(),
		c.hosts2:                            hosts2,
		sshdConfig: fmt.Sprintf("HostKey %s\nAuthorizedKeysFile %s\nPermitRootLogin prohibit-password\nPubkeyAuthentication yes\n"+
			"PasswordAuthentication no\nKbdInteractiveAuthentication no\nUsePAM no\nStrictModes no\nPidFile none\n"+
			"Subsystem sftp internal-sftp\nSetEnv SHLVL=1\n", hostKey, authorized),
		c.sshConfig: fmt.Sprintf("Host *\n\tUser root\n\tIdentityFile %s\n\tIdentitiesOnly yes\n\tUserKnownHostsFile %s\n"+
			"\tGlobalKnownHostsFile /dev/null\n\tStrictHostKeyChecking yes\n\tPasswordAuthentication no\n\tLogLevel ERROR\n",
			clientKey, filepath.Join(c.dir, "known_hosts")),
	}
	for name, text := range files {
		if err := os.WriteFile(name, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}

	// SHLVL=1 (sshd_config above) keeps the sessions' bash from sourcing
	// root's ~/.bashrc, as bash does for commands run by sshd: this
	// machine's may take seconds or wait on a lock, and the test must not
	// depend on it.
	//
	// sshd needs its privilege-separation folder, /run/sshd; it gets one
	// on a /run of its own, in the mount namespace ip netns exec makes,
	// so the host's /run is left as it was.
	for _, h := range all {
		log, err := os.Create(filepath.Join(c.dir, "sshd-"+h.ip+".log"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { log.Close() })
		start := fmt.Sprintf("mount -t tmpfs -o mode=0755 tmpfs /run && mkdir /run/sshd && exec %s -D -e -f %s -o ListenAddress=%s:22",
			tools["sshd"], sshdConfig, h.ip)
		cmd := exec.Command("ip", "netns", "exec", h.ns, "sh", "-c", start)
		cmd.Stdout, cmd.Stderr = log, log
		if err := cmd.Start(); err != nil {
			t.Fatalf("start sshd in %s: %v", h.ns, err)
		}
		sshds = append(sshds, cmd)
	}
	for _, h := range all {
		deadline := time.Now().Add(15 * time.Second)
		for {
			out, err := exec.CommandContext(ctx, tools["ssh"], "-F", c.sshConfig, "-o", "ConnectTimeout=2", "root@"+h.ip, "true").CombinedOutput()
			if err == nil {
				break
			}
			if time.Now().After(deadline) {
				log, _ := os.ReadFile(filepath.Join(c.dir, "sshd-"+h.ip+".log"))
				t.Fatalf("ssh root@%s: %v %s\nsshd log:\n%s", h.ip, err, out, log)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	return c
}

// compareSim reads the one result.json the finished script run r wrote
// under out, runs the same configuration (run options opts) on sim into
// file, and checks that the verbs per operation are equal; it returns the
// tcp result.
func (c *cluster) compareSim(ctx context.Context, t *testing.T, bin, out string, r *scriptRun, file string, opts []string) result {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(out, "*", "result.json"))
	if len(files) != 1 {
		t.Fatalf("want one result.json under %s, found %v\nstdout:\n%s", out, files, &r.stdout)
	}
	tcp := readResult(t, files[0])
	simFile := filepath.Join(c.dir, file)
	args := append([]string{"run", "--fabric", "sim", "--memory-nodes", "2", "--memory-cores", "1", "--json", simFile}, opts...)
	if b, err := exec.CommandContext(ctx, bin, args...).CombinedOutput(); err != nil {
		t.Fatalf("dmbench %s: %v\n%s", strings.Join(args, " "), err, b)
	}
	sim := readResult(t, simFile)
	if len(tcp.VerbsPerOp) == 0 || !reflect.DeepEqual(tcp.VerbsPerOp, sim.VerbsPerOp) {
		t.Errorf("verbs per operation differ:\ntcp %v\nsim %v", tcp.VerbsPerOp, sim.VerbsPerOp)
	}
	return tcp
}

// scriptRun is one run of scripts/run_cluster.sh.
type scriptRun struct {
	cmd            *exec.Cmd
	stdout, stderr bytes.Buffer
	exited         chan struct{}
	err            error // set when exited is closed
}

// start runs scripts/run_cluster.sh on the cluster with the common run
// options and extra ones. A cancelled context, or the end of the test
// while it still runs, interrupts it as Ctrl-C would, so that its trap
// stops what it started.
func (c *cluster) start(ctx context.Context, t *testing.T, bin, out string, extra ...string) *scriptRun {
	t.Helper()
	return c.startOn(ctx, t, bin, out, c.hosts, append(slices.Clone(runOpts), extra...))
}

// startOn runs scripts/run_cluster.sh with hosts file hosts and run
// options opts, as start does.
func (c *cluster) startOn(ctx context.Context, t *testing.T, bin, out, hosts string, opts []string) *scriptRun {
	t.Helper()
	args := []string{filepath.Join("..", "run_cluster.sh"), "--dmbench", bin, "--out", out, "--remote-dir", c.remote,
		"--bytes", "64MiB", "--wait", "15", hosts, "--"}
	args = append(args, opts...)
	r := &scriptRun{cmd: exec.CommandContext(ctx, "bash", args...), exited: make(chan struct{})}
	r.cmd.Env = append(os.Environ(), "SSH_OPTS=-F "+c.sshConfig)
	r.cmd.Cancel = func() error { return r.cmd.Process.Signal(os.Interrupt) }
	r.cmd.WaitDelay = 15 * time.Second
	r.cmd.Stdout, r.cmd.Stderr = &r.stdout, &r.stderr
	if err := r.cmd.Start(); err != nil {
		t.Fatalf("run_cluster.sh: %v", err)
	}
	go func() {
		r.err = r.cmd.Wait()
		close(r.exited)
	}()
	t.Cleanup(func() {
		select {
		case <-r.exited:
		default:
			_ = r.cmd.Process.Signal(os.Interrupt)
			<-r.exited
		}
	})
	return r
}

// wait waits for the script to end and returns how it ended.
func (r *scriptRun) wait() error {
	<-r.exited
	return r.err
}

// killMidRun kills the memory node on victim a second into the run.
func (c *cluster) killMidRun(ctx context.Context, victim host, r *scriptRun) error {
	if err := c.waitRun(ctx, r); err != nil {
		return err
	}
	for _, p := range nsProcs(victim.ns) {
		if strings.Contains(p.cmdline, "\x00memnode\x00") {
			return syscall.Kill(p.pid, syscall.SIGKILL)
		}
	}
	return fmt.Errorf("no dmbench memnode runs in %s (%s)", victim.ns, victim.ip)
}

// waitRun waits until the compute host runs dmbench run, and a second
// more.
func (c *cluster) waitRun(ctx context.Context, r *scriptRun) error {
	return c.waitFor(ctx, r, c.compute, "run\x00--fabric\x00tcp")
}

// waitFor waits until a process with role in its command line runs on h,
// and a second more.
func (c *cluster) waitFor(ctx context.Context, r *scriptRun, h host, role string) error {
	deadline := time.Now().Add(45 * time.Second)
	for !running(h.ns, role) {
		select {
		case <-r.exited:
			return fmt.Errorf("run_cluster.sh ended (%v) before dmbench %s started on %s", r.err, strings.ReplaceAll(role, "\x00", " "), h.ip)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("dmbench %s did not start on %s within 45 s", strings.ReplaceAll(role, "\x00", " "), h.ip)
		}
	}
	time.Sleep(time.Second)
	return nil
}

// checkStopped fails the test if the script left a dmbench process on any
// host or files in its work folder.
func (c *cluster) checkStopped(t *testing.T) {
	t.Helper()
	for _, h := range append(slices.Clone(c.computes), c.mem...) {
		if running(h.ns, "dmbench") {
			t.Errorf("run_cluster.sh left a dmbench process on %s", h.ip)
		}
	}
	if left, _ := os.ReadDir(c.remote); len(left) > 0 {
		t.Errorf("run_cluster.sh left %d folders in %s", len(left), c.remote)
	}
}

// proc is one process of a namespace.
type proc struct {
	pid     int
	cmdline string // NUL-separated, as in /proc
}

// nsProcs lists the processes of network namespace ns.
func nsProcs(ns string) []proc {
	out, err := exec.Command("ip", "netns", "pids", ns).Output()
	if err != nil {
		return nil
	}
	var ps []proc
	for _, f := range strings.Fields(string(out)) {
		pid, err := strconv.Atoi(f)
		if err != nil {
			continue
		}
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		ps = append(ps, proc{pid, string(b)})
	}
	return ps
}

// running reports whether a process of ns has s in its command line.
func running(ns, s string) bool {
	for _, p := range nsProcs(ns) {
		if strings.Contains(p.cmdline, s) {
			return true
		}
	}
	return false
}

// jsonFiles lists the JSON files under dir.
func jsonFiles(dir string) []string {
	var files []string
	_ = filepath.WalkDir(dir, func(p string, _ os.DirEntry, _ error) error {
		if strings.HasSuffix(p, ".json") {
			files = append(files, p)
		}
		return nil
	})
	return files
}

func readResult(t *testing.T, file string) result {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var r result
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return r
}
