package load_test

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"cuelang.org/go/cue/cuecontext"

	"github.com/wlcdev/wlc/internal/load"
	"github.com/wlcdev/wlc/internal/load/budget"
)

// TestBudgetNamesShard: when a workload of a large (sharded) package
// outgrows --max-memory while CUE builds its shard, the error names the
// shard's workload files (where to look), not just the package. Each
// workload file is its own shard here, so the file named is the bomb's.
// The evaluation cannot be stopped (budget.Run returns beside it), so it
// runs in a child process that exits once the budget is spent.
func TestBudgetNamesShard(t *testing.T) {
	const child = "WLC_TEST_BUDGET_CHILD"
	if root := os.Getenv(child); root != "" {
		var p budget.Progress
		o := load.WithShardFiles(load.Options{Progress: &p}, 1)
		err := budget.Run(budget.Limits{Memory: 256 << 20}, &p, func() {
			load.Load(cuecontext.New(), filepath.Join(root, "workloads"), root, o)
		})
		var ex *budget.Exceeded
		if errors.As(err, &ex) && ex.Memory {
			fmt.Printf("exceeded at %s: %v\n", ex.At.File, err)
		} else {
			fmt.Printf("not exceeded: %v\n", err)
		}
		os.Exit(0) // stops the evaluation
	}
	var bomb strings.Builder
	bomb.WriteString("\tprofile: \"H200\"\n\tgpus_per_node: 1\n\tmodel: \"Qwen/Qwen3-8B\" + _s34\n\tprecision: \"bf16\"\n\tlm_eval: tasks: [{name: \"gsm8k\"}]\n\t_s0: \"xxxxxxxx\"\n")
	for i := 1; i <= 34; i++ {
		fmt.Fprintf(&bomb, "\t_s%d: _s%d + _s%d\n", i, i-1, i-1)
	}
	files := map[string]string{"workloads/zz_bomb.cue": workloadKey("bomb", bomb.String())}
	for i := range 3 {
		name := fmt.Sprintf("ok%d", i)
		files["workloads/"+name+".cue"] = workloadKey(name, "\tprofile: \"H200\"\n\tgpus_per_node: 1\n\tmodel: \"Qwen/Qwen3-8B\"\n\tprecision: \"bf16\"\n\tlm_eval: tasks: [{name: \"gsm8k\"}]\n")
	}
	root := writePkg(t, files)
	cmd := exec.Command(os.Args[0], "-test.run=^TestBudgetNamesShard$")
	cmd.Env = append(os.Environ(), child+"="+root)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	want := "exceeded at workloads/zz_bomb.cue: evaluating the workloads of workloads/zz_bomb.cue used more than the memory budget of 256 MiB"
	if !strings.HasPrefix(string(out), want) {
		t.Errorf("a workload doubling a string 34 times in its own shard:\n%s\nwant it to start %q", out, want)
	}
}
