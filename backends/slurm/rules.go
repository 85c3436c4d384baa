package slurm

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/wlcdev/wlc/schema"
)

// Finding is one problem a Slurm rule found. Field is relative to the
// profile (CheckCluster) or to the workload (CheckWorkload); wlc vet turns
// it into a position (VetProfile, VetWorkload), Lower into an error.
type Finding struct {
	Field   string
	Warning bool
	Message string
}

func (f Finding) String() string { return f.Field + ": " + f.Message }

// sbatchValue is what may follow "--option=" on an #SBATCH line. sbatch
// reads those lines with its own small tokenizer (whitespace splits, quotes
// are stripped, there is no escaping), so a value with whitespace, quotes,
// backslashes, '#' or '$' cannot be written there faithfully: it is
// rejected, never emitted.
var sbatchValue = regexp.MustCompile(`^[A-Za-z0-9_.:,+@%=/&|!^*\[\]-]+$`)

// sbatchNameMax is the longest partition, account, QOS or reservation name
// slurmctld takes: a longer one fails the submission ("Pathname of a file,
// directory or other parameter too long").
const sbatchNameMax = 1024

// longOption is one option token, --name or --name=value.
var longOption = regexp.MustCompile(`^--([A-Za-z][A-Za-z0-9-]*)(=(.*))?$`)

// pluginName is an srun --mpi plugin (none, pmix, pmix_v4, pmi2, cray_shasta).
var pluginName = regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)

// sbatchOwned are the sbatch options wlc writes itself (or that would break
// the script's contract: the job's working directory is the submission
// directory, sbatch exports the submitting environment so secrets arrive by
// name, and the script is this file).
var sbatchOwned = map[string]string{
	"job-name":        "the workload name",
	"nodes":           "the workload's nodes",
	"ntasks":          "wlc (one task per node)",
	"ntasks-per-node": "wlc (one task per node)",
	"gres":            "profile slurm.gres",
	"gpus":            "the workload's gpus_per_node",
	"gpus-per-node":   "the workload's gpus_per_node",
	"gpus-per-task":   "the workload's gpus_per_node",
	"partition":       "profile slurm.partition",
	"account":         "profile slurm.account",
	"qos":             "profile slurm.qos",
	"reservation":     "profile slurm.reservation",
	"time":            "profile slurm.time_limit",
	"exclusive":       "profile slurm.exclusive",
	"output":          "wlc (results/<run name>/slurm-%j.out)",
	"error":           "wlc (results/<run name>/slurm-%j.err)",
	"export":          "wlc (secrets come from the submitting environment through sbatch's default --export=ALL)",
	"chdir":           "wlc (results land relative to the submission directory)",
	"wrap":            "wlc (the script is the job)",
	"container-image": "profile slurm.pyxis (the batch step runs on the host)",
}

// srunOwned are the srun options of the steps wlc writes.
var srunOwned = map[string]string{
	"nodes":                   "wlc (one step per node)",
	"ntasks":                  "wlc (one task per step)",
	"ntasks-per-node":         "wlc (one task per step)",
	"nodelist":                "wlc (rank r runs on host r)",
	"overlap":                 "wlc (only the benchmark client overlaps)",
	"gres":                    "profile slurm.gres",
	"gpus":                    "the workload's gpus_per_node",
	"gpus-per-node":           "the workload's gpus_per_node",
	"mpi":                     "profile slurm.mpi",
	"container-image":         "profile slurm.pyxis.image",
	"container-mounts":        "profile slurm.pyxis.mounts",
	"container-workdir":       "profile slurm.pyxis.workdir",
	"container-remap-root":    "profile slurm.pyxis.remap_root",
	"no-container-remap-root": "profile slurm.pyxis.remap_root",
	"container-name":          "wlc",
	"input":                   "wlc (steps read no stdin)",
	"output":                  "wlc",
	"error":                   "wlc",
	"export":                  "wlc (steps inherit the job environment)",
	"chdir":                   "wlc (steps run in the submission directory)",
	"jobid":                   "wlc",
}

// ownedBy finds the owned option that name spells, exactly or as the
// unambiguous abbreviation getopt_long accepts (--part for --partition).
func ownedBy(name string, owned map[string]string) (string, string, bool) {
	if who, ok := owned[name]; ok {
		return name, who, true
	}
	for _, opt := range slices.Sorted(maps.Keys(owned)) {
		if strings.HasPrefix(opt, name) {
			return opt, owned[opt], true
		}
	}
	return "", "", false
}

// CheckCluster applies the rules of a profile's slurm block on the
// profile's hardware, which need no workload. Every value that reaches an
// #SBATCH line or srun's argv is checked here, at vet time; Lower checks
// again and refuses to emit.
func CheckCluster(c *schema.SlurmCluster, hw schema.Hardware) []Finding {
	var fs []Finding
	add := func(field string, warn bool, format string, args ...any) {
		fs = append(fs, Finding{Field: "slurm." + field, Warning: warn, Message: fmt.Sprintf(format, args...)})
	}
	if c.Gres != "" && sbatchValue.MatchString(c.Gres) {
		// --gres=gpu[:type]:N asks N GPUs per node; wlc sizes jobs with
		// gpus_per_node, so both must agree (CheckWorkload).
		switch n, ok := GresCount(c.Gres); {
		case !ok:
			add("gres", false, "cannot read the GPU count in gres %q; write gpu[:type]:N", c.Gres)
		case hw.GPUsPerNode > 0 && n > hw.GPUsPerNode:
			add("gres", false, "gres %s asks %d GPUs per node but a %s node has %d", c.Gres, n, hw.Name, hw.GPUsPerNode)
		}
	}
	for _, v := range []struct{ field, value string }{
		{"partition", c.Partition}, {"account", c.Account}, {"qos", c.QOS},
		{"reservation", c.Reservation}, {"gres", c.Gres},
	} {
		switch {
		case v.value != "" && !sbatchValue.MatchString(v.value):
			add(v.field, false, "%q cannot be written on an #SBATCH line (sbatch splits it at whitespace and strips quotes); use only letters, digits and _.:,+@%%=/&|!^*[]-", v.value)
		case len(v.value) > sbatchNameMax:
			add(v.field, false, "%s is %d characters long, but slurmctld refuses a job whose %s is longer than %d (\"parameter too long\"); use the cluster's %s name", v.field, len(v.value), v.field, sbatchNameMax, v.field)
		}
	}
	if _, err := TimeLimitSeconds(c.TimeLimit); err != nil {
		add("time_limit", false, "%v", err)
	}
	if c.MPI != "" && !pluginName.MatchString(c.MPI) {
		add("mpi", false, "%q is not an srun --mpi plugin name (e.g. pmix, pmi2, none)", c.MPI)
	}
	for i, a := range c.ExtraSbatchArgs {
		field := fmt.Sprintf("extra_sbatch_args[%d]", i)
		m := longOption.FindStringSubmatch(a)
		switch {
		case m == nil:
			add(field, false, "%q: write each sbatch option as one token --name or --name=value (no short options, no separate values)", a)
		case m[2] != "" && !sbatchValue.MatchString(m[3]):
			add(field, false, "%q cannot be written on an #SBATCH line (sbatch splits it at whitespace and strips quotes); use only letters, digits and _.:,+@%%=/&|!^*[]- in the value", a)
		default:
			if opt, who, ok := ownedBy(m[1], sbatchOwned); ok {
				add(field, false, "%s is --%s, which is set by %s; remove it", a, opt, who)
			}
		}
	}
	for i, a := range c.ExtraSrunArgs {
		field := fmt.Sprintf("extra_srun_args[%d]", i)
		m := longOption.FindStringSubmatch(a)
		switch {
		case m == nil:
			add(field, false, "%q: write each srun option as one token --name or --name=value (a separate value would be taken for the command)", a)
		case strings.ContainsAny(a, "\x00\n\r"):
			add(field, false, "%q contains a control character", a)
		default:
			if opt, who, ok := ownedBy(m[1], srunOwned); ok {
				add(field, false, "%s is --%s, which is set by %s; remove it", a, opt, who)
			}
		}
	}
	if p := c.Pyxis; p != nil {
		if p.Image != "" && strings.ContainsAny(p.Image, " \t\n\r\x00,") {
			add("pyxis.image", false, "%q is not an image reference or squashfs path (no whitespace or commas)", p.Image)
		}
		for i, m := range p.Mounts {
			for _, v := range []struct{ what, path string }{{"source", m.Source}, {"target", m.Target}} {
				if !strings.HasPrefix(v.path, "/") || strings.ContainsAny(v.path, ",:\x00 \t\n\v\f\r") {
					add(fmt.Sprintf("pyxis.mounts[%d].%s", i, v.what), false, "%q must be an absolute path without ',', ':' or whitespace (Pyxis splits mounts on ',' and ':', enroot's fstab line on whitespace)", v.path)
				}
			}
		}
		if p.Workdir != "" {
			if !strings.HasPrefix(p.Workdir, "/") {
				add("pyxis.workdir", false, "%q must be an absolute path inside the container", p.Workdir)
			} else if !underMount(p.Workdir, p.Mounts) {
				add("pyxis.workdir", true, "%s is not under any mount target, so results written there stay in the container and are lost with it; mount the checkout there (or leave workdir unset: wlc then mounts the submission directory at its own path and works there)", p.Workdir)
			}
		}
	}
	return fs
}

func underMount(dir string, ms []schema.Mount) bool {
	for _, m := range ms {
		t := strings.TrimSuffix(m.Target, "/")
		if dir == m.Target || dir == t || strings.HasPrefix(dir, t+"/") {
			return true
		}
	}
	return false
}

// CheckWorkload applies the rules that compare a workload with its Slurm
// profile and the node's hardware. Fields are the workload's.
func CheckWorkload(nodes, gpusPerNode, startupTimeoutS int, hw schema.Hardware, c *schema.SlurmCluster) []Finding {
	var fs []Finding
	add := func(field string, warn bool, format string, args ...any) {
		fs = append(fs, Finding{Field: field, Warning: warn, Message: fmt.Sprintf(format, args...)})
	}
	nodeSize := hw.GPUsPerNode
	if c.Gres != "" {
		if n, ok := GresCount(c.Gres); ok {
			if n != gpusPerNode {
				add("gpus_per_node", false, "gpus_per_node is %d but profile slurm.gres %s reserves %d GPUs per node; the server would run on %d of them. Use gpus_per_node %d or a profile whose gres matches", gpusPerNode, c.Gres, n, gpusPerNode, n)
			}
			nodeSize = n
		}
	}
	// gpus_per_node above the node size and nodes above max_nodes are schema
	// rules (CUE reports them); Lower checks them again.
	if nodes > 1 && c.Gres == "" && gpusPerNode < nodeSize {
		add("gpus_per_node", true, "a %d-node server uses %d of the %d GPUs of each %s node (nodes × gpus_per_node = %d × %d = %d GPUs); multi-node servers should use whole nodes: %d × %d", nodes, gpusPerNode, nodeSize, hw.Name, nodes, gpusPerNode, nodes*gpusPerNode, (nodes*gpusPerNode+nodeSize-1)/nodeSize, nodeSize)
	}
	if limit, err := TimeLimitSeconds(c.TimeLimit); err == nil && limit > 0 && startupTimeoutS >= limit {
		add("startup_timeout_s", true, "startup_timeout_s %d is not below the job's time limit %s (%d s): Slurm would end the job before the health wait gives up, and no benchmark could run", startupTimeoutS, c.TimeLimit, limit)
	}
	return fs
}

// GresCount reads N from gpu[:type]:N.
func GresCount(gres string) (int, bool) {
	parts := strings.Split(gres, ":")
	if len(parts) < 2 || len(parts) > 3 || parts[0] != "gpu" {
		return 0, false
	}
	n, err := strconv.Atoi(parts[len(parts)-1])
	if err != nil || n < 1 {
		return 0, false
	}
	return n, true
}

var timeForms = regexp.MustCompile(`^(?:(\d+)-)?(\d+)(?::(\d+))?(?::(\d+))?$`)

// TimeLimitSeconds parses a Slurm --time value: minutes, MM:SS, HH:MM:SS,
// D-HH, D-HH:MM or D-HH:MM:SS. Zero is rejected (on most clusters it means
// no limit, which a benchmark job must not ask for by accident).
func TimeLimitSeconds(s string) (int, error) {
	bad := fmt.Errorf("time limit %q is not a Slurm --time value: use minutes, MM:SS, HH:MM:SS, D-HH, D-HH:MM or D-HH:MM:SS", s)
	m := timeForms.FindStringSubmatch(s)
	if m == nil {
		return 0, bad
	}
	num := func(i int) int { n, _ := strconv.Atoi(m[i]); return n }
	var secs int
	switch {
	case m[1] != "": // D-HH[:MM[:SS]]
		secs = num(1)*86400 + num(2)*3600 + num(3)*60 + num(4)
		if (m[3] != "" && num(3) > 59) || (m[4] != "" && num(4) > 59) || num(2) > 23 {
			return 0, bad
		}
	case m[4] != "": // HH:MM:SS
		if num(3) > 59 || num(4) > 59 {
			return 0, bad
		}
		secs = num(2)*3600 + num(3)*60 + num(4)
	case m[3] != "": // MM:SS
		if num(3) > 59 {
			return 0, bad
		}
		secs = num(2)*60 + num(3)
	default: // minutes
		secs = num(2) * 60
	}
	if secs <= 0 {
		return 0, fmt.Errorf("time limit %q is zero; give the job a real limit", s)
	}
	return secs, nil
}
