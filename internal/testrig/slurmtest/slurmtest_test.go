package slurmtest

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wlcdev/wlc/internal/testrig/testenv"
)

// Jobs here take 1-3 s; the timeout only bounds a broken cluster or a queue
// shared with other packages' jobs.
const jobTimeout = 90 * time.Second

func writeScript(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "job.sbatch")
	if err := os.WriteFile(p, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func timed(t *testing.T) {
	start := time.Now()
	t.Cleanup(func() { t.Logf("took %v", time.Since(start).Round(time.Millisecond)) })
}

// runJob submits body and waits; it fails the test unless the job ends in want.
func runJob(t *testing.T, c *Cluster, want, body string, extraArgs ...string) (id, out string) {
	t.Helper()
	id = c.Sbatch(t, writeScript(t, body), extraArgs...)
	state, code := c.Wait(t, id, jobTimeout)
	out = c.Output(t, id)
	if state != want {
		t.Fatalf("job %s ended %s (exit %s), want %s; output:\n%s", id, state, code, want, out)
	}
	return id, out
}

func TestRequireFindsTwoNodesWithGPUs(t *testing.T) {
	c := Require(t)
	if len(c.Nodes) != 2 || c.Nodes[0] != "n1" || c.Nodes[1] != "n2" {
		t.Errorf("Nodes = %v, want [n1 n2]", c.Nodes)
	}
	if c.GPUsPerNode != 4 {
		t.Errorf("GPUsPerNode = %d, want 4", c.GPUsPerNode)
	}
}

func TestOneNodeJob(t *testing.T) {
	c := Require(t)
	timed(t)
	_, out := runJob(t, c, "COMPLETED", `#!/bin/bash
#SBATCH --job-name=wlc-one-node
#SBATCH --nodes=1
#SBATCH --gres=gpu:2
set -euo pipefail
echo "user=$(id -un) nodes=$SLURM_JOB_NUM_NODES"
srun bash -c 'echo "step node=$SLURMD_NODENAME gpus=$CUDA_VISIBLE_DEVICES"'
`)
	if !strings.Contains(out, "user=root nodes=1") {
		t.Errorf("output lacks %q:\n%s", "user=root nodes=1", out)
	}
	// Which two of the node's four GPUs depends on what else the cluster
	// runs (other packages' tests share it): any two distinct ones.
	if m := regexp.MustCompile(`gpus=([0-3]),([0-3])\b`).FindStringSubmatch(out); m == nil || m[1] == m[2] {
		t.Errorf("the step sees no two distinct GPUs of the node:\n%s", out)
	}
	if !regexp.MustCompile(`step node=n[12] `).MatchString(out) {
		t.Errorf("no srun step output:\n%s", out)
	}
}

// The shape wlc's Slurm backend generates for multi-node vLLM: one
// backgrounded srun per node, pinned with --nodelist, with Pyxis options,
// running a vllm found first on PATH.
func TestTwoNodeJobPerNodeSteps(t *testing.T) {
	c := Require(t)
	timed(t)
	bin := t.TempDir()
	stub := "#!/bin/sh\necho \"vllm-stub node=$SLURMD_NODENAME gpus=$CUDA_VISIBLE_DEVICES image=$WLC_FAKEPYXIS_IMAGE args=$*\"\n"
	if err := os.WriteFile(filepath.Join(bin, "vllm"), []byte(stub), 0o755); err != nil {
		t.Fatal(err)
	}
	_, out := runJob(t, c, "COMPLETED", `#!/bin/bash
#SBATCH --job-name=wlc-two-node
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=1
#SBATCH --gpus-per-node=4
#SBATCH --exclusive
set -euo pipefail
mapfile -t NODES < <(scontrol show hostnames "$SLURM_JOB_NODELIST")
pids=()
for rank in "${!NODES[@]}"; do
  extra=""; [ "$rank" -gt 0 ] && extra=--headless
  srun --nodes=1 --ntasks=1 --nodelist="${NODES[$rank]}" \
    --container-image=vllm/vllm-openai:v0.11.0 --container-mounts=/tmp:/tmp \
    vllm serve m --nnodes "${#NODES[@]}" --node-rank "$rank" --master-addr "${NODES[0]}" $extra &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p"; done
`, ExportPath(bin))
	for _, want := range []string{
		"vllm-stub node=n1 gpus=0,1,2,3 image=vllm/vllm-openai:v0.11.0 args=serve m --nnodes 2 --node-rank 0 --master-addr n1\n",
		"vllm-stub node=n2 gpus=0,1,2,3 image=vllm/vllm-openai:v0.11.0 args=serve m --nnodes 2 --node-rank 1 --master-addr n1 --headless\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestGresPerNodeOnTwoNodes(t *testing.T) {
	c := Require(t)
	timed(t)
	_, out := runJob(t, c, "COMPLETED", `#!/bin/bash
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=1
#SBATCH --gres=gpu:4
srun bash -c 'echo "$SLURMD_NODENAME gpus=$CUDA_VISIBLE_DEVICES"' | sort
`)
	if want := "n1 gpus=0,1,2,3\nn2 gpus=0,1,2,3\n"; out != want {
		t.Errorf("output = %q, want %q", out, want)
	}
}

func TestPyxisFlagsReachTasks(t *testing.T) {
	c := Require(t)
	timed(t)
	_, out := runJob(t, c, "COMPLETED", `#!/bin/bash
#SBATCH --nodes=1
#SBATCH --container-image=batch-image
set -euo pipefail
echo "batch image=$WLC_FAKEPYXIS_IMAGE"
srun --container-image=nvcr.io#nvidia/pytorch:24.01 \
  --container-mounts=/data:/data,/root/.cache:/root/.cache:ro \
  --container-workdir=/work --container-name=vllm-server \
  --no-container-mount-home --container-remap-root --no-container-remap-root \
  --container-mount-home --container-writable --container-env=HF_TOKEN,VLLM_X \
  env | grep '^WLC_FAKEPYXIS_' | sort
`)
	for _, want := range []string{
		"batch image=batch-image",
		"WLC_FAKEPYXIS_IMAGE=nvcr.io#nvidia/pytorch:24.01",
		"WLC_FAKEPYXIS_MOUNTS=/data:/data,/root/.cache:/root/.cache:ro",
		"WLC_FAKEPYXIS_WORKDIR=/work",
		"WLC_FAKEPYXIS_NAME=vllm-server",
		"WLC_FAKEPYXIS_MOUNT_HOME=1",
		"WLC_FAKEPYXIS_NO_MOUNT_HOME=1",
		"WLC_FAKEPYXIS_REMAP_ROOT=1",
		"WLC_FAKEPYXIS_NO_REMAP_ROOT=1",
		"WLC_FAKEPYXIS_WRITABLE=1",
		"WLC_FAKEPYXIS_ENV=HF_TOKEN,VLLM_X",
	} {
		if !strings.Contains(out, want+"\n") {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// Generated scripts may pass --mpi=pmix; it must work across both "nodes",
// which share one /tmp (see TmpFS in testdata/slurm/slurm.conf.in).
func TestMPIPMIxAcrossNodes(t *testing.T) {
	c := Require(t)
	timed(t)
	_, out := runJob(t, c, "COMPLETED", `#!/bin/bash
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=1
set -euo pipefail
srun --mpi=pmix bash -c 'echo "$SLURMD_NODENAME rank=$PMIX_RANK"' | sort
`)
	if want := "n1 rank=0\nn2 rank=1\n"; out != want {
		t.Errorf("output = %q, want %q", out, want)
	}
}

func TestTestOnly(t *testing.T) {
	c := Require(t)
	timed(t)
	script := writeScript(t, "#!/bin/bash\ntrue\n")
	if err := c.TestOnly(t, script, "--nodes=2", "--gpus-per-node=4", "--exclusive"); err != nil {
		t.Errorf("a 2-node, 4-GPU request was rejected: %v", err)
	}
	for _, bad := range [][]string{
		{"--nodes=3"},
		{"--gpus-per-node=5"},
		{"--partition=nosuch"},
	} {
		err := c.TestOnly(t, script, bad...)
		if err == nil {
			t.Errorf("sbatch --test-only %v succeeded, want a rejection", bad)
			continue
		}
		t.Logf("%v rejected: %v", bad, err)
	}
	if err := c.TestOnly(t, script, "--nodes=3"); err != nil &&
		!strings.Contains(err.Error(), "Requested node configuration is not available") {
		t.Errorf("3-node rejection does not say why: %v", err)
	}
}

func TestFailingStepFailsJob(t *testing.T) {
	c := Require(t)
	timed(t)
	id := c.Sbatch(t, writeScript(t, `#!/bin/bash
#SBATCH --nodes=1
set -euo pipefail
srun bash -c 'exit 3'
echo "not reached"
`))
	state, code := c.Wait(t, id, jobTimeout)
	if state != "FAILED" || code != "3:0" {
		t.Errorf("job ended %s exit %s, want FAILED exit 3:0", state, code)
	}
	if out := c.Output(t, id); strings.Contains(out, "not reached") {
		t.Errorf("script went on after the failed step:\n%s", out)
	}
}

func TestCancelLeavesNoProcesses(t *testing.T) {
	c := Require(t)
	timed(t)
	marker := fmt.Sprintf("sleep 600.%d", os.Getpid())
	id := c.Sbatch(t, writeScript(t, "#!/bin/bash\n#SBATCH --nodes=2\nsrun --nodes=2 "+marker+"\n"))
	deadline := time.Now().Add(jobTimeout)
	for len(LeftoverProcesses(t, regexp.QuoteMeta(marker))) < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("job %s never started its two sleeps: %v", id, c.Job(t, id))
		}
		time.Sleep(100 * time.Millisecond)
	}
	c.Cancel(t, id)
	if state, _ := c.Wait(t, id, jobTimeout); state != "CANCELLED" {
		t.Errorf("job ended %s, want CANCELLED", state)
	}
	if left := Survivors(t, regexp.QuoteMeta(marker)); len(left) > 0 {
		t.Errorf("processes of cancelled job %s survive %v:\n%s", id, KillGrace, strings.Join(left, "\n"))
	}
}

// freePortBlock finds a port P with P..P+n all free, for a second cluster
// beside the shared one.
func freePortBlock(t *testing.T, n int) int {
	t.Helper()
	for p := 20000 + os.Getpid()%5000*4; p < 60000; p += n + 1 {
		var ls []net.Listener
		for i := 0; i <= n; i++ {
			l, err := net.Listen("tcp", ":"+strconv.Itoa(p+i))
			if err != nil {
				break
			}
			ls = append(ls, l)
		}
		for _, l := range ls {
			l.Close()
		}
		if len(ls) == n+1 {
			return p
		}
	}
	t.Fatal("no free block of ports for a second Slurm cluster")
	return 0
}

// A second cluster in its own directory and ports, so stopping it leaves
// the shared one (used by parallel test packages) alone.
func TestStopScriptLeavesNoDaemons(t *testing.T) {
	Require(t) // installed, and munged runs (the second cluster shares it)
	timed(t)
	root := testenv.RepoRoot(t)
	dir, err := os.MkdirTemp("", "wlc-slurm-stop-")
	if err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "WLC_SLURM_DIR="+dir, "WLC_SLURM_PORT="+strconv.Itoa(freePortBlock(t, 2)))
	script := func(name string, env []string) string {
		t.Helper()
		cmd := exec.Command("bash", filepath.Join(root, "testdata", "slurm", name))
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", name, err, out)
		}
		return string(out)
	}
	t.Cleanup(func() {
		script("stop.sh", env)
		os.RemoveAll(dir)
	})

	begin := time.Now()
	out := script("start.sh", env)
	t.Logf("start.sh: %v", time.Since(begin).Round(time.Millisecond))
	if !strings.Contains(out, "export SLURM_CONF="+dir+"/slurm.conf") {
		t.Fatalf("start.sh did not print SLURM_CONF:\n%s", out)
	}
	if out := script("start.sh", env); !strings.Contains(out, "already running") {
		t.Errorf("second start.sh did not reuse the running cluster:\n%s", out)
	}
	pids := recordedPIDs(t, dir)
	if len(pids) < 3 {
		t.Fatalf("start.sh recorded %v, want slurmctld and 2 slurmd", pids)
	}

	// A running job makes stop.sh cancel it and wait for its slurmstepds.
	// Submitted without Sbatch, whose cleanup would query the stopped
	// controller and wait for its timeout.
	second := &Cluster{Conf: filepath.Join(dir, "slurm.conf"), Dir: dir}
	marker := fmt.Sprintf("sleep 700.%d", os.Getpid())
	job := writeScript(t, "#!/bin/bash\n#SBATCH --nodes=2\nsrun "+marker+"\n")
	id, err := second.run(30*time.Second, t.TempDir(), "sbatch", "--parsable", job)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(jobTimeout)
	for len(LeftoverProcesses(t, regexp.QuoteMeta(marker))) < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("job %s on the second cluster never started: %v", id, second.Job(t, strings.TrimSpace(id)))
		}
		time.Sleep(100 * time.Millisecond)
	}
	if len(unixSocketsUnder(t, dir)) == 0 {
		t.Fatalf("no step sockets under %s while a job runs; the check below would prove nothing", dir)
	}

	begin = time.Now()
	script("stop.sh", env)
	t.Logf("stop.sh with a running job: %v", time.Since(begin).Round(time.Millisecond))
	for name, pid := range pids {
		if ProcessAlive(pid) {
			t.Errorf("%s (pid %d) survived stop.sh", name, pid)
		}
	}
	if left := Survivors(t, regexp.QuoteMeta(marker)); len(left) > 0 {
		t.Errorf("job processes left after stop.sh:\n%s", strings.Join(left, "\n"))
	}
	// Every slurmd/slurmstepd of this cluster holds a socket under dir.
	if socks := unixSocketsUnder(t, dir); len(socks) > 0 {
		t.Errorf("sockets still held under %s after stop.sh (a slurmstepd survived?):\n%s", dir, strings.Join(socks, "\n"))
	}
	script("stop.sh", env) // idempotent
	script("stop.sh", append(os.Environ(), "WLC_SLURM_DIR="+filepath.Join(dir, "never-started")))
}

// unixSocketsUnder lists bound unix sockets whose path is under dir.
func unixSocketsUnder(t *testing.T, dir string) []string {
	t.Helper()
	data, err := os.ReadFile("/proc/net/unix")
	if err != nil {
		t.Fatalf("need /proc/net/unix: %v", err)
	}
	var socks []string
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) >= 8 && strings.HasPrefix(f[7], dir+"/") {
			socks = append(socks, f[7])
		}
	}
	return socks
}

// recordedPIDs reads the daemons' pid files that stop.sh works from.
func recordedPIDs(t *testing.T, dir string) map[string]int {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "run", "*.pid"))
	pids := map[string]int{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		pids[filepath.Base(f)] = pid
	}
	return pids
}

func TestParseFields(t *testing.T) {
	f := parseFields("JobId=7 JobName=a b JobState=FAILED Reason=NonZeroExitCode ExitCode=3:0 Socks/Node=* Command=/tmp/x y/job.sbatch StdOut=/tmp/o")
	for k, want := range map[string]string{
		"JobId": "7", "JobName": "a b", "JobState": "FAILED", "ExitCode": "3:0",
		"Socks/Node": "*", "Command": "/tmp/x y/job.sbatch", "StdOut": "/tmp/o",
	} {
		if f[k] != want {
			t.Errorf("%s = %q, want %q", k, f[k], want)
		}
	}
}
