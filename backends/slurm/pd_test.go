package slurm_test

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wlcdev/wlc/backends/slurm"
	"github.com/wlcdev/wlc/internal/testrig/testenv"
)

// TestInstanceMain runs the launcher every node of an instance step runs
// (pd.sh's WLC_INSTANCE_MAIN) as each node of a two-node data-parallel
// instance: it finds its node, exports its address for NIXL and adds its
// first data-parallel rank; a node not in the list fails.
func TestInstanceMain(t *testing.T) {
	lib := filepath.Join(testenv.RepoRoot(t), "backends", "slurm", "pd.sh")
	run := func(node, localDP string) (string, error) {
		script := `source "$1"; shift; bash -c "$WLC_INSTANCE_MAIN" wlc-instance "$@"`
		cmd := exec.Command("bash", "-c", script, "bash", lib, localDP, "n1", "10.0.0.1", "n2", "10.0.0.2", "--",
			"sh", "-c", `echo "$VLLM_NIXL_SIDE_CHANNEL_HOST" "$@"`, "vllm", "serve", "m")
		cmd.Env = []string{"PATH=/usr/bin:/bin", "SLURMD_NODENAME=" + node}
		out, err := cmd.CombinedOutput()
		return strings.TrimSpace(string(out)), err
	}
	for _, tc := range []struct{ node, localDP, want string }{
		{"n1", "4", "10.0.0.1 serve m --data-parallel-start-rank 0"},
		{"n2", "4", "10.0.0.2 serve m --data-parallel-start-rank 4"},
		{"n2", "0", "10.0.0.2 serve m"},
	} {
		got, err := run(tc.node, tc.localDP)
		if err != nil || got != tc.want {
			t.Errorf("node %s, %s ranks per node: %q (%v), want %q", tc.node, tc.localDP, got, err, tc.want)
		}
	}
	if out, err := run("n3", "4"); err == nil || !strings.Contains(out, "node n3 is not a node of this instance") {
		t.Errorf("a node outside the instance ran: %q (%v)", out, err)
	}
}

// TestMultiNodeInstance lowers a decode instance spanning two nodes: one
// srun step over both, each node's address passed to the launcher, the
// data-parallel flags with hybrid load balancing, and the router given
// one --decode URL per node but one --prefill URL for the prefill instance.
func TestMultiNodeInstance(t *testing.T) {
	w := goldenPlan(t, "pd_two_node")
	if w.Disagg == nil {
		t.Fatal("no pd_two_node golden")
	}
	w.Nodes = 3
	w.Profile.Slurm.MaxNodes = 3
	dec := &w.Disagg.Instances[1]
	dec.Nodes, dec.DataParallelSize, dec.DataParallelSizeLocal, dec.RPCPort = 2, 2, 1, 29501
	s, err := slurm.Script(w)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`srun --nodes=2 --ntasks=2 --ntasks-per-node=1 --nodelist="${WLC_HOSTS[1]},${WLC_HOSTS[2]}" --gres=gpu:4 \`,
		`    bash -c "$WLC_INSTANCE_MAIN" wlc-instance 1 \` + "\n" + `    "${WLC_HOSTS[1]}" "${WLC_ADDRS[1]}" \` + "\n" + `    "${WLC_HOSTS[2]}" "${WLC_ADDRS[2]}" \`,
		`    --data-parallel-size-local 1 \` + "\n" + `    --data-parallel-address "${WLC_ADDRS[1]}" \` + "\n" + `    --data-parallel-rpc-port 29501 \` + "\n" + `    --data-parallel-hybrid-lb \`,
		`      --prefill "http://${WLC_ADDRS[0]}:8100" \` + "\n" + `      --decode "http://${WLC_ADDRS[1]}:8200" \` + "\n" + `      --decode "http://${WLC_ADDRS[2]}:8200"`,
		`  "http://${WLC_ADDRS[2]}:8200/health" || exit $?`,
	} {
		if !strings.Contains(s, want) {
			t.Errorf("the script lacks\n%s", want)
		}
	}
	// A plan whose instances do not tile the job is refused.
	dec.FirstNode = 2
	if _, err := slurm.Script(w); err == nil || !strings.Contains(err.Error(), "decode[0] starts on node 2, want 1") {
		t.Errorf("instances with a gap lowered: %v", err)
	}
}
