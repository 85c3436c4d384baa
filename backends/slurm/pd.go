package slurm

import (
	_ "embed"
	"fmt"
	"strconv"
	"strings"

	"github.com/wlcdev/wlc/backends/runner"
	"github.com/wlcdev/wlc/internal/plan"
)

// pdLib is the shell of disaggregated jobs: the instance launcher, node
// addresses, the readiness wait of instances and router.
//
//go:embed pd.sh
var pdLib string

// validateDisagg checks that the plan's instances tile the job's nodes.
func validateDisagg(w plan.Workload) []string {
	d := w.Disagg
	var msgs []string
	node := 0
	roles := map[string]int{}
	for _, in := range d.Instances {
		if in.FirstNode != node || in.Nodes < 1 {
			msgs = append(msgs, fmt.Sprintf("%s[%d] starts on node %d, want %d (instances take consecutive nodes)", in.Role, in.Index, in.FirstNode, node))
		}
		if in.Port < 1 || in.Port > 65535 {
			msgs = append(msgs, fmt.Sprintf("%s[%d] has port %d", in.Role, in.Index, in.Port))
		}
		if len(in.Args) == 0 {
			msgs = append(msgs, fmt.Sprintf("%s[%d] has no arguments (the model comes first)", in.Role, in.Index))
		}
		for _, e := range in.Env {
			if err := plan.CheckEnvName(e.Name); err != nil {
				msgs = append(msgs, fmt.Sprintf("environment variable name: %v", err))
			}
		}
		node += in.Nodes
		roles[in.Role]++
	}
	if node != w.Nodes {
		msgs = append(msgs, fmt.Sprintf("the instances span %d nodes but the job has %d", node, w.Nodes))
	}
	if roles["prefill"] == 0 || roles["decode"] == 0 {
		msgs = append(msgs, "disaggregated serving needs prefill and decode instances")
	}
	if len(d.Router.Argv) == 0 {
		msgs = append(msgs, "the router has no command")
	}
	for _, e := range d.Router.Env {
		if err := plan.CheckEnvName(e.Name); err != nil {
			msgs = append(msgs, fmt.Sprintf("environment variable name: %v", err))
		}
	}
	return msgs
}

// pdShape is the header's description of the instances.
func pdShape(w plan.Workload) string {
	var parts []string
	d := w.Disagg
	for _, role := range []string{"prefill", "decode"} {
		n := 0
		var first plan.Instance
		for _, in := range d.Instances {
			if in.Role == role {
				if n == 0 {
					first = in
				}
				n++
			}
		}
		parts = append(parts, fmt.Sprintf("%s %d × (%d node(s), tensor %d, data %d)", role, n, first.Nodes, first.TensorParallelSize, first.DataParallelSize))
	}
	return strings.Join(parts, " + ")
}

// addr is the shell word for the address of the job's node i.
func addr(i int) string { return fmt.Sprintf(`"${WLC_ADDRS[%d]}"`, i) }

// instanceURLs are the http://addr:port URLs of an instance, one per node.
func instanceURLs(in plan.Instance, path string) []string {
	var out []string
	for n := in.FirstNode; n < in.FirstNode+in.Nodes; n++ {
		out = append(out, fmt.Sprintf(`"http://${WLC_ADDRS[%d]}:%d%s"`, n, in.Port, path))
	}
	return out
}

// pdFunctions defines wlc_server_start (one srun step per instance) and
// wlc_router_start.
func (g *gen) pdFunctions() {
	w := g.w
	d := w.Disagg
	common := g.common()
	g.printf("%s\n", pdLib)

	g.printf("# wlc_server_start: one srun step per instance, on its own nodes, stdin\n")
	g.printf("# closed, output in the results directory.\n")
	g.printf("wlc_server_start() {\n")
	g.printf("  wlc_log %s\n", g.q(fmt.Sprintf("starting %d instance(s) on %d nodes: %s", len(d.Instances), w.Nodes, pdShape(w))))
	for k, in := range d.Instances {
		name := fmt.Sprintf("%s[%d]", in.Role, in.Index)
		hosts := []string{}
		for n := in.FirstNode; n < in.FirstNode+in.Nodes; n++ {
			hosts = append(hosts, fmt.Sprintf("${WLC_HOSTS[%d]}", n))
		}
		g.printf("\n  # %s: %s\n", name, runner.Comment(fmt.Sprintf("node(s) %d-%d, tensor %d, data %d, port %d", in.FirstNode, in.FirstNode+in.Nodes-1, in.TensorParallelSize, in.DataParallelSize, in.Port)))
		g.printf("  WLC_SERVER_NAMES[%d]=\"%s on %s\"\n", k, name, strings.Join(hosts, ","))
		g.printf("  WLC_SERVER_LOGS[%d]=$WLC_RESULTS_DIR/%s-%d.log\n", k, in.Role, in.Index)
		step := [][]string{{"srun", fmt.Sprintf("--nodes=%d", in.Nodes), fmt.Sprintf("--ntasks=%d", in.Nodes), "--ntasks-per-node=1",
			`--nodelist="` + strings.Join(hosts, ",") + `"`, gpuFlag(w)}}
		for _, o := range common {
			step = append(step, []string{o})
		}
		local := in.DataParallelSizeLocal
		if in.DataParallelSize <= 1 {
			local = 0
		}
		step = append(step, []string{"bash", "-c", `"$WLC_INSTANCE_MAIN"`, "wlc-instance", strconv.Itoa(local)})
		for n := in.FirstNode; n < in.FirstNode+in.Nodes; n++ {
			step = append(step, []string{fmt.Sprintf(`"${WLC_HOSTS[%d]}"`, n), addr(n)})
		}
		step = append(step, []string{"--"})
		// The workload's environment, then the role's over it: the
		// instance's alone (the batch shell, which steps inherit, has neither).
		step = append(step, []string{"env", `"${WLC_ENV[@]}"`})
		for _, a := range g.envDiff(in.Env) {
			step = append(step, []string{a})
		}
		serve, err := runner.Words(in.Args, runner.NoVars)
		g.keep(err)
		step = append(step, []string{"vllm", "serve"})
		step = append(step, runner.Group(serve)...)
		step = append(step, []string{"--host", "0.0.0.0"}, []string{"--port", strconv.Itoa(in.Port)})
		if in.DataParallelSize > 1 {
			step = append(step,
				[]string{"--data-parallel-size-local", strconv.Itoa(in.DataParallelSizeLocal)},
				[]string{"--data-parallel-address", addr(in.FirstNode)},
				[]string{"--data-parallel-rpc-port", strconv.Itoa(in.RPCPort)},
				[]string{"--data-parallel-hybrid-lb"})
		}
		step = append(step, []string{"</dev/null", fmt.Sprintf(`>"${WLC_SERVER_LOGS[%d]}"`, k), "2>&1", "&"})
		g.printf("  %s\n", runner.Continued(step, "    "))
		g.printf("  WLC_SERVER_PIDS[%d]=$!\n", k)
	}
	g.printf("}\n\n")

	r := d.Router
	k := len(d.Instances)
	g.printf("# wlc_router_start: the router on this node (the first), in vLLM PD mode,\n")
	g.printf("# with every prefill instance and every decode node; clients reach it at\n")
	g.printf("# $WLC_BASE_URL.\n")
	g.printf("wlc_router_start() {\n")
	g.printf("  WLC_SERVER_NAMES[%d]=\"router on $WLC_HEAD\"\n", k)
	g.printf("  WLC_SERVER_LOGS[%d]=$WLC_RESULTS_DIR/router.log\n", k)
	g.printf("  wlc_log \"starting the router on $WLC_BASE_URL\"\n")
	g.printf("  (\n")
	if r.NofileLimit > 0 {
		g.printf("    # Several sockets per in-flight request: raise the soft open-file limit.\n")
		g.printf("    ulimit -S -n %d || {\n", r.NofileLimit)
		g.printf("      echo \"cannot raise the open-file limit to %d (hard limit $(ulimit -H -n))\" >&2\n", r.NofileLimit)
		g.printf("      exit 1\n")
		g.printf("    }\n")
	}
	if r.Dir != "" {
		if rest, ok := strings.CutPrefix(r.Dir, "~/"); ok {
			g.printf("    cd \"$HOME\"/%s\n", g.q(rest))
		} else {
			g.printf("    cd %s\n", g.q(r.Dir))
		}
	}
	argv, err := runner.Words(r.Argv, runner.NoVars)
	g.keep(err)
	// The router is the workload's too: its environment and the router's own.
	cmd := [][]string{{"exec", "env", `"${WLC_ENV[@]}"`}}
	if len(r.Env) > 0 {
		for _, e := range r.Env {
			a, err := runner.Assign(e.Name, e.Value, runner.NoVars)
			g.keep(err)
			cmd = append(cmd, []string{a})
		}
	}
	cmd = append(cmd, []string{argv[0]})
	cmd = append(cmd, runner.Group(argv[1:])...)
	cmd = append(cmd, []string{"--port", `"$WLC_PORT"`})
	for _, in := range d.Instances {
		urls := instanceURLs(in, "")
		if in.Role == "prefill" {
			// One URL per prefill instance: vLLM balances its own ranks.
			cmd = append(cmd, []string{"--prefill", urls[0]})
			continue
		}
		for _, u := range urls {
			cmd = append(cmd, []string{"--decode", u})
		}
	}
	g.printf("    %s\n", runner.Continued(cmd, "      "))
	g.printf("  ) </dev/null >\"${WLC_SERVER_LOGS[%d]}\" 2>&1 &\n", k)
	g.printf("  WLC_SERVER_PIDS[%d]=$!\n", k)
	g.printf("}\n\n")
	g.printf("# wlc_router_check: the router's program is where it will run (this batch\n")
	g.printf("# step), checked before any instance loads.\n")
	g.printf("wlc_router_check() {\n")
	g.printf("  if ! (\n")
	if r.Dir != "" {
		if rest, ok := strings.CutPrefix(r.Dir, "~/"); ok {
			g.printf("    cd \"$HOME\"/%s 2>/dev/null || exit 1\n", g.q(rest))
		} else {
			g.printf("    cd %s 2>/dev/null || exit 1\n", g.q(r.Dir))
		}
	}
	g.printf("    command -v %s >/dev/null 2>&1\n", argv[0])
	g.printf("  ); then\n")
	where := ""
	if r.Dir != "" {
		where = " in " + runner.Comment(r.Dir)
	}
	g.printf("    wlc_log %s\n", g.q(fmt.Sprintf("the router %s is not there%s on the first node; install it (or fix the router's command): no instance was started", r.Argv[0], where)))
	g.printf("    exit 127\n")
	g.printf("  fi\n")
	g.printf("}\n\n")
	g.client()
}

// envDiff renders, as NAME=value words, the variables of env (the role's)
// that WLC_ENV, the workload's, does not already set to the same value.
func (g *gen) envDiff(env []plan.EnvVar) []string {
	base := map[string]string{}
	for _, e := range g.w.Env {
		base[e.Name] = e.Value
	}
	var out []string
	for _, e := range env {
		if v, ok := base[e.Name]; ok && v == e.Value {
			continue
		}
		a, err := runner.Assign(e.Name, e.Value, runner.NoVars)
		g.keep(err)
		out = append(out, a)
	}
	return out
}

// pdStart is the run section's server start: instances, their health,
// the router, its readiness; then lib.sh's wlc_wait_ready checks the
// model through the router.
func (g *gen) pdStart() {
	d := g.w.Disagg
	g.printf("wlc_router_check\n")
	g.printf("wlc_node_addrs\n")
	g.printf("wlc_server_start\n")
	g.printf("%s", runner.ToolsStart(g.w))
	var urls []string
	for _, in := range d.Instances {
		urls = append(urls, instanceURLs(in, "/health")...)
	}
	g.printf("%s\n", runner.Continued(append([][]string{{"wlc_wait_urls", `"$WLC_STARTUP_TIMEOUT_S"`, g.q("the instances")}}, wrap(urls)...), "  "))
	g.printf("wlc_router_start\n")
	g.printf("wlc_wait_urls %d %s \"$WLC_BASE_URL%s\" || exit $?\n", d.Router.StartupTimeoutS, g.q("the router"), plan.RouterReadiness)
	g.printf("wlc_wait_ready || exit $?\n")
}

func wrap(ws []string) [][]string {
	out := make([][]string, len(ws))
	for i, w := range ws {
		out[i] = []string{w}
	}
	if len(out) > 0 {
		out[len(out)-1] = append(out[len(out)-1], "||", "exit", "$?")
	}
	return out
}
