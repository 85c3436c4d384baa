package importer

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"cuelang.org/go/cue/format"
	"cuelang.org/go/cue/parser"
	"gopkg.in/yaml.v3"

	"github.com/wlcdev/wlc/internal/diag"
)

// ProfilesResult is perf-eval's lib/gpu_profiles.yaml converted.
type ProfilesResult struct {
	// Names are the profiles converted, in the file's order.
	Names []string
	// Source is the formatted CUE file (package workloads) holding them;
	// nil when a profile was refused (Findings has an error): a fleet
	// half-converted would send jobs to the wrong place.
	Source   []byte
	Findings diag.List
}

// ProfilesFile is the name of perf-eval's profile file (lib/).
const ProfilesFile = "gpu_profiles.yaml"

// PerfEvalProfiles converts perf-eval's GPU profiles (main's or a
// branch's lib/gpu_profiles.yaml) into wlc profiles, as literally as the
// workloads: what perf-eval's generator and lib/server.sh read of each
// field becomes the typed field that does the same (server_runtime
// native + k8s_plugin is runtime k8s; + docker_plugin, docker; the Slurm
// launcher's PERF_EVAL_SLURM_* variables in env become the slurm block).
// A profile named after a hardware id of the catalog runs on it. nodes
// is, by profile, the most nodes a workload imported with it takes: a
// Slurm fleet's max_nodes (perf-eval had no such limit).
func PerfEvalProfiles(file string, data []byte, nodes map[string]int) ProfilesResult {
	c := &conv{file: file}
	res := ProfilesResult{}
	_, root, ok := c.parse(data)
	if ok && (root == nil || root.Kind != yaml.MappingNode) {
		c.errorf(nil, "", "perf-eval's %s is a mapping of profile names to profiles", ProfilesFile)
	}
	if c.diags.HasErrors() {
		return ProfilesResult{Findings: c.diags}
	}
	var b strings.Builder
	b.WriteString("package workloads\n\n")
	fmt.Fprintf(&b, "// Converted by wlc import perf-eval from %s.\n", file)
	b.WriteString("profiles: {\n")
	fs, _ := c.fields(root, "")
	for _, f := range fs {
		name := f.key.Value
		if !keyRE.MatchString(name) {
			c.errorf(f.key, name, "profile name %q is not a wlc name (letters, digits, _, . and -); rename it, and the gpu: of its workloads", name)
			continue
		}
		if f.val.Kind != yaml.MappingNode {
			c.errorf(f.val, name, "a profile is a mapping of fields, not a %s", kindName(f.val))
			continue
		}
		p := &workload{}
		c.profile1(p, name, f.key, f.val, nodes[name])
		for _, cm := range comments(f.key.HeadComment) {
			b.WriteString("// " + cm + "\n")
		}
		b.WriteString(label(name) + ": {\n")
		for _, l := range p.lines {
			b.WriteString(l + "\n")
		}
		b.WriteString("}\n")
		res.Names = append(res.Names, name)
	}
	b.WriteString("}\n")
	res.Findings = c.diags
	if c.diags.HasErrors() {
		return res
	}
	src, err := format.Source([]byte(b.String()), format.Simplify())
	if err == nil {
		_, err = parser.ParseFile(file, src)
	}
	if err != nil {
		c.errorf(nil, "", "internal error: the generated CUE does not parse (%v); nothing was converted, please report it with this file", err)
		res.Findings = c.diags
		return res
	}
	res.Source = src
	return res
}

// profile1 converts one profile's fields into p's lines.
// at is the profile's key, where what concerns the whole profile is said.
func (c *conv) profile1(p *workload, name string, at, m *yaml.Node, nodes int) {
	fs, by := c.fields(m, name)
	str := func(key string) (string, *field) {
		f, ok := by[key]
		if !ok {
			return "", nil
		}
		if f.val.Kind != yaml.ScalarNode {
			c.errorf(f.val, name+"."+key, "%s must be a string", key)
			return "", &f
		}
		return f.val.Value, &f
	}
	known := set("queue", "hf_home", "server_runtime", "k8s_plugin", "docker_plugin", "image_repo", "env", "hf_cache_volume", "ecr_pull_through_cache", "always_pull", "extra_volumes", "agent_tags")
	for _, f := range fs {
		if !known[f.key.Value] {
			c.warnf(f.key, name+"."+f.key.Value, "unknown profile key %s (perf-eval ignored it); kept as a TODO comment, not converted", f.key.Value)
			p.todo = append(p.todo, yamlText(f))
		}
	}

	hw, inferred := ProfileHardware(name)
	switch {
	case hw != "" && !inferred:
		p.add(nil, "hardware: "+quote(hw))
	case hw != "":
		c.warnf(at, name, "hardware %s inferred from the profile name %s; check it", hw, name)
		p.add([]string{"TODO(import): inferred from the profile's name; perf-eval's profiles had no hardware field."}, "hardware: "+quote(hw))
	default:
		ids := strings.Join(catalog().ids, ", ")
		c.warnf(at, name, "profile %s names no hardware of the catalog: set hardware to one of %s", name, ids)
		p.add([]string{"TODO(import): perf-eval's profiles had no hardware field; set one of " + ids + "."}, "hardware: "+quote(name))
	}

	rt, rtAt := str("server_runtime")
	plugin, pluginAt := str("k8s_plugin")
	dockerPlugin, dockerPluginAt := str("docker_plugin")
	runtime := ""
	switch {
	case rt == "" || rt == "docker" || rt == "docker-rocm" || rt == "xpu_docker":
		runtime = "docker" // `docker run` on the agent's host
	case rt == "native" && plugin != "":
		runtime = "k8s"
	case rt == "native" && dockerPlugin != "":
		runtime = "docker" // the docker plugin runs the image on the agent's host
	case rt == "native":
		c.errorf(rtAt.val, name+".server_runtime", "server_runtime native without k8s_plugin or docker_plugin: perf-eval's generator exited on it; add the plugin the fleet uses")
	case rt == "slurm":
		runtime = "slurm"
	default:
		c.errorf(rtAt.val, name+".server_runtime", "server_runtime %q is none perf-eval knew (docker, native, slurm, docker-rocm, xpu_docker)", rt)
	}
	if runtime == "" {
		return
	}
	// What perf-eval read only for another runtime it ignored here.
	for _, o := range []struct {
		key, readFor string
		used         bool
	}{
		{"k8s_plugin", "server_runtime native", rt == "native"},
		{"docker_plugin", "server_runtime native", rt == "native"},
		{"hf_cache_volume", "the k8s plugin", runtime == "k8s"},
		{"always_pull", "the docker plugin", runtime == "docker"},
		{"extra_volumes", "the docker plugin", runtime == "docker"},
	} {
		if f, ok := by[o.key]; ok && !o.used {
			c.warnf(f.key, name+"."+o.key, "%s: perf-eval read it only for %s, so it ignored it here; kept as a TODO comment, not converted", o.key, o.readFor)
			p.todo = append(p.todo, yamlText(f))
		}
	}
	var rtComments []string
	if rtAt != nil {
		rtComments = nodeComments(*rtAt)
	}
	p.add(rtComments, "runtime: "+quote(runtime))

	if q, qf := str("queue"); qf == nil || q == "" {
		c.errorf(at, name+".queue", "profile %s has no queue: perf-eval's generator failed on it (KeyError); add the Buildkite queue", name)
	} else {
		p.add(nodeComments(*qf), "queue: "+quote(q))
	}
	if h, hf := str("hf_home"); hf != nil {
		p.add(nodeComments(*hf), "hf_home: "+quote(h))
	}
	for _, k := range []string{"image_repo", "ecr_pull_through_cache", "agent_tags"} {
		if f, ok := by[k]; ok {
			p.add(nodeComments(f), k+": "+c.value(f.val, name+"."+k))
		}
	}

	slurm := map[string]field{}
	if f, ok := by["env"]; ok {
		if runtime == "slurm" && f.val.Kind == yaml.MappingNode {
			// The launcher's settings, read from env by perf-eval's
			// Slurm scripts, are typed fields here: out of the server's env.
			var keep []*yaml.Node
			entries, _ := c.fields(f.val, name+".env") // a duplicate is refused here
			for _, e := range entries {
				if k := e.key.Value; strings.HasPrefix(k, "PERF_EVAL_SLURM_") || strings.HasPrefix(k, "PERF_EVAL_BENCH_CLIENT_") {
					slurm[k] = e
					continue
				}
				keep = append(keep, e.key, e.val)
			}
			f.val = &yaml.Node{Kind: yaml.MappingNode, Content: keep, Line: f.val.Line, Column: f.val.Column}
		}
		c.env(p, f, name)
	}

	switch runtime {
	case "k8s":
		if plugin != "nvidia" && plugin != "amd" {
			c.errorf(pluginAt.val, name+".k8s_plugin", "k8s_plugin %q: perf-eval's generator knew nvidia and amd", plugin)
			return
		}
		lines := []string{"plugin: " + quote(plugin)}
		if f, ok := by["hf_cache_volume"]; ok {
			lines = append(lines, "hf_cache_volume: "+c.value(f.val, name+".hf_cache_volume"))
		}
		p.add(nil, block("k8s", lines))
	case "docker":
		if dockerPluginAt != nil && dockerPlugin != "nvidia" {
			c.errorf(dockerPluginAt.val, name+".docker_plugin", "docker_plugin %q: perf-eval's generator knew nvidia", dockerPlugin)
			return
		}
		var lines []string
		if f, ok := by["always_pull"]; ok {
			lines = append(lines, append(commentLines(nodeComments(f)), "always_pull: "+c.value(f.val, name+".always_pull"))...)
		}
		if f, ok := by["extra_volumes"]; ok {
			lines = append(lines, append(commentLines(nodeComments(f)), "volumes: "+c.value(f.val, name+".extra_volumes"))...)
		}
		p.add(nil, block("docker", lines))
	case "slurm":
		p.add(nil, block("slurm", c.slurmBlock(name, slurm, nodes)))
	}
	// Comments below a profile's last field (YAML's foot comments) say
	// what the profile leaves out and why: kept, at its end.
	var foot []string
	for _, f := range fs {
		foot = append(foot, comments(f.key.FootComment, f.val.FootComment)...)
	}
	p.lines = append(p.lines, commentLines(append(foot, comments(m.FootComment)...))...)
	for _, t := range p.todo {
		p.lines = append(p.lines, "// TODO(import): "+strings.ReplaceAll(t, "\n", "\n// "))
	}
}

// slurmBlock is the slurm block of perf-eval's Slurm launcher settings
// (lib/slurm_launch_vllm.sh reads them from env).
func (c *conv) slurmBlock(name string, env map[string]field, nodes int) []string {
	get := func(k string) (string, bool) {
		f, ok := env["PERF_EVAL_SLURM_"+k]
		if !ok {
			return "", false
		}
		if f.val.Kind != yaml.ScalarNode {
			c.errorf(f.val, name+".env.PERF_EVAL_SLURM_"+k, "env values must be scalars")
			return "", false
		}
		return f.val.Value, true
	}
	lines := []string{"// TODO(import): how many nodes one job may take on this cluster; perf-eval had no such limit."}
	if nodes > 1 {
		lines = []string{
			"// TODO(import): how many nodes one job may take on this cluster (perf-eval had no such",
			"// limit): the most an imported workload on it takes.",
		}
	}
	lines = append(lines, fmt.Sprintf("max_nodes: %d", max(nodes, 1)))
	for _, kv := range [][2]string{{"PARTITION", "partition"}, {"ACCOUNT", "account"}, {"QOS", "qos"}, {"RESERVATION", "reservation"}, {"TIME", "time_limit"}, {"GRES", "gres"}} {
		if v, ok := get(kv[0]); ok && v != "" {
			lines = append(lines, kv[1]+": "+quote(v))
		}
	}
	// #30's launcher, configured by these variables, passed --mpi pmix
	// unless told otherwise.
	if v, ok := get("MPI"); !ok && len(env) > 0 {
		lines = append(lines, `mpi: "pmix" // perf-eval's launcher default`)
	} else if v != "" {
		lines = append(lines, "mpi: "+quote(v))
	}
	if v, ok := get("EXTRA_SBATCH_ARGS"); ok {
		var rest []string
		for _, a := range strings.Fields(v) {
			if a == "--exclusive" {
				lines = append(lines, "exclusive: true")
				continue
			}
			rest = append(rest, quote(a))
		}
		if len(rest) > 0 {
			lines = append(lines, "extra_sbatch_args: ["+strings.Join(rest, ", ")+"]")
		}
	}
	if v, ok := get("EXTRA_SRUN_ARGS"); ok && strings.TrimSpace(v) != "" {
		var args []string
		for _, a := range strings.Fields(v) {
			args = append(args, quote(a))
		}
		lines = append(lines, "extra_srun_args: ["+strings.Join(args, ", ")+"]")
	}
	if v, _ := get("CONTAINER_RUNTIME"); v == "pyxis" {
		var py []string
		if m, ok := get("CONTAINER_MOUNTS"); ok && m != "" {
			var ms []string
			for _, one := range strings.Split(m, ",") {
				parts := strings.Split(one, ":")
				if len(parts) < 2 || parts[0] == "" || parts[1] == "" {
					c.warnf(env["PERF_EVAL_SLURM_CONTAINER_MOUNTS"].val, name+".env.PERF_EVAL_SLURM_CONTAINER_MOUNTS", "mount %q is not host:container; left out", one)
					continue
				}
				mt := "{source: " + quote(parts[0]) + ", target: " + quote(parts[1])
				if len(parts) > 2 && parts[2] == "ro" {
					mt += ", read_only: true"
				}
				ms = append(ms, mt+"}")
			}
			py = append(py, "mounts: [\n"+strings.Join(ms, ",\n")+",\n]")
		}
		if v, ok := get("CONTAINER_WORKDIR"); ok && v != "" {
			py = append(py, "workdir: "+quote(v))
		}
		if v, ok := get("NO_CONTAINER_REMAP_ROOT"); ok && v != "1" {
			py = append(py, "remap_root: true")
		}
		lines = append(lines, block("pyxis", py))
	}
	// What has no field: said, and kept as a comment.
	typed := set("PARTITION", "ACCOUNT", "QOS", "RESERVATION", "TIME", "GRES", "MPI", "EXTRA_SBATCH_ARGS", "EXTRA_SRUN_ARGS", "CONTAINER_RUNTIME", "CONTAINER_MOUNTS", "CONTAINER_WORKDIR", "NO_CONTAINER_REMAP_ROOT", "REQUEST_GPUS")
	keys := slices.Sorted(maps.Keys(env))
	for _, k := range keys {
		if typed[strings.TrimPrefix(k, "PERF_EVAL_SLURM_")] && strings.HasPrefix(k, "PERF_EVAL_SLURM_") {
			continue
		}
		c.warnf(env[k].key, name+".env."+k, "%s configured perf-eval's Slurm launcher; wlc has no setting for it, so it is left out (kept as a TODO comment)", k)
		lines = append(lines, "// TODO(import): "+commentText(k)+"="+commentText(env[k].val.Value)+" (perf-eval's launcher setting; no wlc field)")
	}
	return lines
}

// ProfileHardware is the hardware catalog's id a perf-eval profile runs
// on: its name, or, inferred, the id its name starts with (GB300_SLURM);
// "" when neither.
func ProfileHardware(name string) (id string, inferred bool) {
	ids := catalog().ids
	if slices.Contains(ids, name) {
		return name, false
	}
	for _, c := range ids {
		if strings.HasPrefix(name, c+"_") && len(c) > len(id) {
			id = c
		}
	}
	return id, id != ""
}
