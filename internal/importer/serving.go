package importer

import (
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"
)

// servingFields are the keys of perf-eval's serving: block (schema v1).
var servingFields = set("version", "mode", "launcher", "slurm", "kv_transfer", "common_serve_args", "roles", "router")

// ShellSplit splits s as Python's shlex.split does (POSIX mode), which is
// how perf-eval's PD parser read common_serve_args and a role's
// serve_args: blanks separate words, quotes group, backslash escapes.
func ShellSplit(s string) ([]string, error) {
	var out []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r':
			if inWord {
				out = append(out, cur.String())
				cur.Reset()
				inWord = false
			}
		case ch == '\'':
			inWord = true
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, fmt.Errorf("no closing quotation")
			}
			cur.WriteString(s[i+1 : i+1+j])
			i += j + 1
		case ch == '"':
			inWord = true
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("\\\"$`\n", s[i+1]) >= 0 {
					i++
				}
				cur.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, fmt.Errorf("no closing quotation")
			}
		case ch == '\\':
			inWord = true
			if i+1 >= len(s) {
				return nil, fmt.Errorf("no escaped character")
			}
			i++
			cur.WriteByte(s[i])
		default:
			inWord = true
			cur.WriteByte(ch)
		}
	}
	if inWord {
		out = append(out, cur.String())
	}
	return out, nil
}

// role is one perf-eval serving role, converted.
type role struct {
	name  string
	lines []string
	nodes int // count × nodes_per_instance
	gpn   int
	at    *yaml.Node
}

// serving converts perf-eval's serving: block (PD disaggregation, schema
// v1) into disagg, and nodes/gpus_per_node from its roles. The Slurm
// settings it carried belong to wlc's profile; they are kept as a TODO.
func (c *conv) serving(w *workload, top map[string]field) {
	sf := top["serving"]
	if sf.val.Kind != yaml.MappingNode {
		c.errorf(sf.val, "serving", "serving must be a mapping")
		return
	}
	fs, by := c.fields(sf.val, "serving")
	for _, f := range fs {
		if !servingFields[f.key.Value] {
			c.errorf(f.key, "serving."+f.key.Value, "unknown key serving.%s (perf-eval refused it)", f.key.Value)
		}
	}
	for _, kw := range [][2]string{{"version", "1"}, {"mode", "pd_disagg"}, {"launcher", "slurm"}} {
		k, want := kw[0], kw[1]
		f, ok := by[k]
		if !ok || f.val.Value != want || (k == "version" && f.val.Tag != "!!int") {
			at := sf.key
			if ok {
				at = f.val
			}
			c.errorf(at, "serving."+k, "serving.%s must be %s (perf-eval's PD schema v1)", k, want)
		}
	}
	if v, ok := top["vllm"]; ok && v.val.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(v.val.Content); i += 2 {
			if v.val.Content[i].Value == "serve_args" && strings.TrimSpace(v.val.Content[i+1].Value) != "" {
				c.errorf(v.val.Content[i+1], "vllm.serve_args", "vllm.serve_args must be empty with serving (perf-eval refused it); use serving.common_serve_args and serving.roles[].serve_args")
			}
		}
	}
	if f, ok := by["common_serve_args"]; ok {
		if lines := c.shellServe(f.val, "serving.common_serve_args"); len(lines) > 0 {
			w.add(nodeComments(f), block("serve", lines))
		}
	}

	// kv_transfer: one connector block, both roles' kv_transfer.
	var kv []string
	if f, ok := by["kv_transfer"]; ok && f.val.Kind == yaml.MappingNode {
		kfs, kby := c.fields(f.val, "serving.kv_transfer")
		for _, g := range kfs {
			switch g.key.Value {
			case "connector", "load_failure_policy", "extra_config":
			default:
				c.errorf(g.key, "serving.kv_transfer."+g.key.Value, "unknown key serving.kv_transfer.%s (perf-eval refused it)", g.key.Value)
			}
		}
		conn := "NixlConnector"
		if g, ok := kby["connector"]; ok {
			conn = g.val.Value
		}
		kv = append(kv, "kv_connector: "+quote(conn))
		policy := "fail"
		if g, ok := kby["load_failure_policy"]; ok {
			policy = g.val.Value
		}
		kv = append(kv, "kv_load_failure_policy: "+quote(policy))
		if g, ok := kby["extra_config"]; ok && g.val.Tag != "!!null" {
			kv = append(kv, "kv_connector_extra_config: "+c.value(g.val, "serving.kv_transfer.extra_config"))
		}
	} else {
		// perf-eval's defaults.
		kv = []string{`kv_connector: "NixlConnector"`, `kv_load_failure_policy: "fail"`}
	}
	w.lets = append(w.lets, "// Both roles move KV caches through this connector (serving.kv_transfer).\nlet connector = {\n"+strings.Join(kv, "\n")+"\n}")

	var roles []role
	rf, ok := by["roles"]
	if !ok || rf.val.Kind != yaml.SequenceNode || len(rf.val.Content) == 0 {
		c.errorf(sf.key, "serving.roles", "serving.roles must be a non-empty list of one prefill and one decode role")
		return
	}
	seen := map[string]bool{}
	for i, rn := range rf.val.Content {
		r := c.role(resolve(rn), fmt.Sprintf("serving.roles[%d]", i))
		if r == nil {
			continue
		}
		if seen[r.name] {
			c.errorf(r.at, fmt.Sprintf("serving.roles[%d].role", i), "a second %s role; perf-eval takes exactly one prefill and one decode role", r.name)
			continue
		}
		seen[r.name] = true
		roles = append(roles, *r)
	}
	if !seen["prefill"] || !seen["decode"] {
		c.errorf(rf.key, "serving.roles", "serving.roles needs one prefill and one decode role")
		return
	}
	nodes, gpn := 0, roles[0].gpn
	for _, r := range roles {
		nodes += r.nodes
		if r.gpn != gpn {
			c.errorf(r.at, "serving.roles", "roles use %d and %d GPUs per node; one Slurm allocation has one gpus_per_node (perf-eval refused it)", gpn, r.gpn)
			return
		}
	}
	if !w.gpusRefused && w.gpus > 0 && w.gpus != nodes*gpn {
		var at *yaml.Node
		if w.gpusAt != nil {
			at = w.gpusAt.val
		}
		c.errorf(at, "num_gpus", "num_gpus is %d, but serving.roles need %d nodes × %d GPUs = %d (perf-eval refused it)", w.gpus, nodes, gpn, nodes*gpn)
	}
	w.setShape(nodes, gpn)

	var d []string
	for _, name := range []string{"prefill", "decode"} {
		for _, r := range roles {
			if r.name == name {
				d = append(d, block(name, r.lines))
			}
		}
	}
	if f, ok := by["router"]; ok {
		if lines := c.router(w, f); len(lines) > 0 {
			d = append(d, block("router", lines))
		}
	} else {
		c.errorf(sf.key, "serving.router", "serving.router is required (perf-eval refused a PD workload without one)")
	}
	w.add(nodeComments(sf), block("disagg", d))

	if f, ok := by["slurm"]; ok {
		c.warnf(f.key, "serving.slurm", "serving.slurm (partition, time limit, grace period, Pyxis mounts) belongs to the profile in wlc: set slurm.partition, slurm.time_limit and slurm.pyxis.mounts on profile %s; kept as a TODO comment", w.profile)
		w.todo = append(w.todo, "serving."+yamlText(f))
	}
}

// shellServe shlex-splits a PD serve_args string and maps it onto typed
// serve fields.
func (c *conv) shellServe(n *yaml.Node, path string) []string {
	if n.Kind != yaml.ScalarNode || (n.Tag != "!!str" && n.Tag != "!!null") {
		c.errorf(n, path, "%s must be a string", path)
		return nil
	}
	toks, err := ShellSplit(n.Value)
	if err != nil {
		c.errorf(n, path, "%s does not split as a shell string: %v", path, err)
		return nil
	}
	for _, t := range toks {
		flag, _, _ := strings.Cut(t, "=")
		switch flag {
		case "--host", "--port", "--tensor-parallel-size", "-tp", "--tp", "--data-parallel-size", "-dp", "--dp",
			"--data-parallel-size-local", "--data-parallel-address", "--data-parallel-rpc-port",
			"--data-parallel-start-rank", "--data-parallel-rank", "--kv-transfer-config":
			c.errorf(n, path, "%s is set by the PD launcher (perf-eval refused it here)", flag)
			return nil
		}
	}
	kept := toks[:0:0]
	for _, t := range toks {
		if f, _, _ := strings.Cut(t, "="); f == "--data-parallel-hybrid-lb" {
			c.warnf(n, path, "--data-parallel-hybrid-lb dropped: perf-eval's launcher dropped it too and adds it to every data-parallel instance, as wlc does")
			continue
		}
		kept = append(kept, t)
	}
	return c.serveTokens(n, path, kept).lines()
}

func (c *conv) role(n *yaml.Node, path string) *role {
	if n.Kind != yaml.MappingNode {
		c.errorf(n, path, "%s must be a mapping", path)
		return nil
	}
	fs, by := c.fields(n, path)
	for _, f := range fs {
		switch f.key.Value {
		case "role", "count", "nodes_per_instance", "gpus_per_node", "base_port", "tensor_parallel_size", "kv_role", "serve_args", "env", "health_check":
		default:
			c.errorf(f.key, path+"."+f.key.Value, "unknown key %s.%s (perf-eval refused it)", path, f.key.Value)
		}
	}
	name := by["role"].val
	if name == nil || (name.Value != "prefill" && name.Value != "decode") {
		c.errorf(n, path+".role", "role must be prefill or decode")
		return nil
	}
	r := &role{name: name.Value, at: name}
	num := func(k string, def int) int {
		f, ok := by[k]
		if !ok {
			return def
		}
		v, ok := c.intVal(f, path+"."+k)
		if !ok || v < 1 {
			c.errorf(f.val, path+"."+k, "%s.%s must be a positive integer", path, k)
			return def
		}
		return v
	}
	count, nodes, gpn := num("count", 0), num("nodes_per_instance", 0), num("gpus_per_node", 0)
	if count == 0 || nodes == 0 || gpn == 0 {
		c.errorf(n, path, "%s needs count, nodes_per_instance and gpus_per_node (perf-eval refused it)", path)
		return nil
	}
	tp := num("tensor_parallel_size", 1)
	if gpn%tp != 0 {
		c.errorf(by["tensor_parallel_size"].val, path+".tensor_parallel_size", "tensor_parallel_size %d must divide gpus_per_node %d (perf-eval refused it)", tp, gpn)
		return nil
	}
	r.nodes, r.gpn = count*nodes, gpn
	if count != 1 {
		r.lines = append(r.lines, fmt.Sprintf("count: %d", count))
	}
	if nodes != 1 {
		r.lines = append(r.lines, fmt.Sprintf("nodes: %d", nodes))
	}
	if p := num("base_port", 8000); p != 8000 {
		r.lines = append(r.lines, fmt.Sprintf("port: %d", p))
	}
	// perf-eval derived data parallelism from the GPUs; wlc spells it.
	serve := []string{}
	if tp != 1 {
		serve = append(serve, fmt.Sprintf("tensor_parallel_size: %d", tp))
	}
	if dp := nodes * gpn / tp; dp != 1 {
		serve = append(serve, fmt.Sprintf("data_parallel_size: %d", dp))
	}
	if f, ok := by["serve_args"]; ok {
		serve = append(serve, c.shellServe(f.val, path+".serve_args")...)
	}
	if len(serve) > 0 {
		r.lines = append(r.lines, block("serve", serve))
	}
	want := map[string]string{"prefill": "kv_producer", "decode": "kv_consumer"}[r.name]
	if f, ok := by["kv_role"]; ok && f.val.Value != want {
		c.errorf(f.val, path+".kv_role", "a %s role's kv_role must be %s (perf-eval refused %s)", r.name, want, f.val.Value)
	}
	r.lines = append(r.lines, "kv_transfer: connector")
	if f, ok := by["env"]; ok && f.val.Kind == yaml.MappingNode {
		if lines := c.envLines(f, path+".env"); len(lines) > 0 {
			r.lines = append(r.lines, block("env", lines))
		}
	}
	if f, ok := by["health_check"]; ok {
		c.healthCheck(f, path, "/health")
	}
	return r
}

// healthCheck accepts the path wlc polls; the timeouts become comments.
func (c *conv) healthCheck(f field, path, want string) {
	if f.val.Kind != yaml.MappingNode {
		return
	}
	_, by := c.fields(f.val, path+".health_check")
	if p, ok := by["path"]; ok && p.val.Value != want {
		c.warnf(p.val, path+".health_check.path", "wlc polls %s, not %s", want, p.val.Value)
	}
}

func (c *conv) router(w *workload, f field) []string {
	const path = "serving.router"
	if f.val.Kind != yaml.MappingNode {
		c.errorf(f.val, path, "serving.router must be a mapping")
		return nil
	}
	fs, _ := c.fields(f.val, path)
	var lines []string
	for _, g := range fs {
		k, v := g.key.Value, g.val
		at := path + "." + k
		switch k {
		case "repo_path":
			dir := v.Value
			for _, home := range []string{"${HOME}/", "$HOME/"} {
				if rest, ok := strings.CutPrefix(dir, home); ok {
					dir = "~/" + rest
				}
			}
			if !strings.HasPrefix(dir, "/") && !strings.HasPrefix(dir, "~/") {
				c.errorf(v, at, "repo_path %s: wlc starts the router in an absolute directory or one under ~/ (${HOME}/...); other variables are not expanded", v.Value)
				continue
			}
			lines = append(lines, "dir: "+quote(dir))
		case "revision":
			if v.Value != "" {
				lines = append(lines, fmt.Sprintf("// vllm-router revision %s (build it in dir).", commentText(v.Value)))
			}
		case "command":
			var argv []string
			if v.Kind == yaml.SequenceNode {
				for _, e := range v.Content {
					argv = append(argv, e.Value)
				}
			} else {
				var err error
				if argv, err = ShellSplit(v.Value); err != nil {
					c.errorf(v, at, "command does not split as a shell string: %v", err)
					continue
				}
			}
			q := make([]string, len(argv))
			for i, a := range argv {
				q[i] = quote(a)
			}
			if len(argv) != 1 || argv[0] != "vllm-router" {
				lines = append(lines, "command: ["+strings.Join(q, ", ")+"]")
			}
		case "policy":
			if v.Value != "round_robin" {
				lines = append(lines, "policy: "+quote(v.Value))
			}
		case "listen_host":
			if v.Value != "0.0.0.0" {
				c.warnf(v, at, "the router listens on 0.0.0.0 in wlc (the benchmark runs beside it on the first node); listen_host %s dropped", v.Value)
			}
		case "client_host":
			if v.Value != "127.0.0.1" && v.Value != "localhost" {
				c.warnf(v, at, "clients reach the router on 127.0.0.1 in wlc (they run on its node); client_host %s dropped", v.Value)
			}
		case "port":
			if n, ok := c.intVal(g, at); ok {
				w.add(nil, fmt.Sprintf("// The router's port (serving.router.port).\nport: %d", n))
			}
		case "metrics_port", "nofile_limit", "intra_node_data_parallel_size":
			if n, ok := c.intVal(g, at); ok && !(k == "intra_node_data_parallel_size" && n == 1) {
				lines = append(lines, fmt.Sprintf("%s: %d", k, n))
			}
		case "prefill_endpoints", "decode_endpoints":
			want := map[string]string{"prefill_endpoints": "all_instances", "decode_endpoints": "all_nodes"}[k]
			if v.Value != want {
				c.errorf(v, at, "%s must be %s (perf-eval's schema v1; wlc routes to every prefill instance and every decode node)", k, want)
			}
		case "env":
			if el := c.envLines(g, at); len(el) > 0 {
				lines = append(lines, block("env", el))
			}
		case "health_check":
			c.healthCheck(g, path, "/readiness")
			if v.Kind == yaml.MappingNode {
				_, hb := c.fields(v, at)
				if t, ok := hb["timeout_s"]; ok {
					if n, ok := c.intVal(t, at+".timeout_s"); ok && n != 600 {
						lines = append(lines, fmt.Sprintf("startup_timeout_s: %d", n))
					}
				}
			}
		default:
			c.errorf(g.key, at, "unknown key %s (perf-eval refused it)", at)
		}
	}
	return lines
}

// envLines renders a mapping of environment variables as CUE lines.
func (c *conv) envLines(f field, path string) []string {
	fs, _ := c.fields(f.val, path)
	var lines []string
	for _, e := range fs {
		if e.val.Kind != yaml.ScalarNode {
			c.errorf(e.val, path+"."+e.key.Value, "env values must be scalars")
			continue
		}
		lines = append(lines, label(e.key.Value)+": "+quote(e.val.Value))
	}
	return lines
}
