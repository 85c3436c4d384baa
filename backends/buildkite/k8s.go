package buildkite

import (
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"

	"github.com/buildkite/go-pipeline"
	"github.com/buildkite/go-pipeline/ordered"
	"gopkg.in/yaml.v3"

	"github.com/wlcdev/wlc/backends"
	"github.com/wlcdev/wlc/internal/plan"
)

// k8sPluginSource is the agent-stack-k8s plugin. go-pipeline (and the
// agent) canonicalise "kubernetes" to the full source, which is the name
// agent-stack-k8s looks for, so the full form is what the pipeline says.
const k8sPluginSource = "github.com/buildkite-plugins/kubernetes-buildkite-plugin"

// Defaults of perf-eval's pod shapes (§3.3 item 6).
const (
	usageSource = "ci-test"
	// hfTokenVar is the secret the pod takes from the cluster's secret store.
	hfTokenVar = "HF_TOKEN"
)

type omap = ordered.Map[string, any]

func om(kv ...any) *omap {
	m := ordered.NewMap[string, any](len(kv) / 2)
	for i := 0; i+1 < len(kv); i += 2 {
		m.Set(kv[i].(string), kv[i+1])
	}
	return m
}

// k8sPlugin is the kubernetes plugin of a k8s-profile step: a full podSpec
// on nvidia clusters, a podSpecPatch of the controller's container-0 on AMD
// clusters.
func k8sPlugin(w plan.Workload, opts backends.Options) (*pipeline.Plugin, error) {
	k := w.Profile.K8s
	if k == nil {
		return nil, fmt.Errorf("profile %s: runtime k8s without a k8s block", w.Profile.Name)
	}
	override, err := hfCacheOverride(w, opts)
	if err != nil {
		return nil, err
	}
	home := hfHome(w)
	if home == "" {
		return nil, fmt.Errorf("profile %s: a k8s pod needs HF_HOME, the profile's hf_home (schema/profile.cue defaults it on runtime k8s) or the workload's env", w.Profile.Name)
	}
	var cfg *omap
	switch k.Plugin {
	case "nvidia":
		cfg = om("podSpec", nvidiaPodSpec(w, home, override))
	case "amd":
		cfg = om("podSpecPatch", amdPodSpecPatch(w, home, override))
	default:
		return nil, fmt.Errorf("profile %s: unknown k8s.plugin %q (want nvidia or amd)", w.Profile.Name, k.Plugin)
	}
	return &pipeline.Plugin{Source: k8sPluginSource, Config: cfg}, nil
}

// hfHome is the server's HF_HOME: the plan's (workload env, else the
// profile's hf_home, which the schema defaults for k8s profiles).
func hfHome(w plan.Workload) string {
	for _, e := range w.Env {
		if e.Name == "HF_HOME" && e.Value != "" {
			return e.Value
		}
	}
	return ""
}

// hfCacheOverride reads <PROFILE>_HF_CACHE_VOLUME: a Kubernetes volume
// source as JSON (or YAML), e.g. {"persistentVolumeClaim":{"claimName":"hf"}}.
// It returns nil when the variable is unset.
func hfCacheOverride(w plan.Workload, opts backends.Options) (map[string]any, error) {
	name := envName(w.Profile.Name, "HF_CACHE_VOLUME")
	raw := strings.TrimSpace(opts.Env[name])
	if raw == "" {
		return nil, nil
	}
	var v any
	if err := yaml.Unmarshal([]byte(raw), &v); err != nil {
		return nil, fmt.Errorf("%s is not JSON: %v", name, err)
	}
	m, ok := v.(map[string]any)
	if !ok || len(m) == 0 {
		return nil, fmt.Errorf("%s must be a Kubernetes volume source object, e.g. {\"persistentVolumeClaim\":{\"claimName\":\"hf-cache\"}}; got %s", name, raw)
	}
	if _, has := m["name"]; has {
		return nil, fmt.Errorf("%s is a volume source without a name (wlc names the volume hf-cache); remove \"name\"", name)
	}
	return m, nil
}

// hfCacheVolume is the hf-cache volume: the override, else the profile's
// hf_cache_volume (default emptyDir, reclaimed with the pod).
func hfCacheVolume(w plan.Workload, override map[string]any) *omap {
	src := override
	if src == nil {
		src = w.Profile.K8s.HFCacheVolume
	}
	if len(src) == 0 {
		src = map[string]any{"emptyDir": map[string]any{}}
	}
	v := om("name", "hf-cache")
	for _, k := range slices.Sorted(maps.Keys(src)) {
		v.Set(k, src[k])
	}
	return v
}

// podEnv is the server container's own environment: the usage tag, HF_HOME
// and the HF token from the cluster's secret (by reference, never its
// value). The rest of the workload's environment is set by the script.
func podEnv(w plan.Workload, home string) []any {
	env := []any{
		om("name", "VLLM_USAGE_SOURCE", "value", usageSource),
		om("name", "HF_HOME", "value", home),
	}
	if slices.Contains(w.Secrets, hfTokenVar) {
		ref := w.Profile.K8s.HFTokenSecret
		env = append(env, om("name", hfTokenVar, "valueFrom",
			om("secretKeyRef", om("name", ref.Name, "key", ref.Key))))
	}
	return env
}

func imagePullSecrets(w plan.Workload) []any {
	if s := w.Profile.K8s.ImagePullSecret; s != "" {
		return []any{om("name", s)}
	}
	return nil
}

// under reports whether p is dir or inside it.
func under(p, dir string) bool {
	p, dir = path.Clean(p), path.Clean(dir)
	return p == dir || strings.HasPrefix(p, dir+"/")
}

// hostPathVolumes are the profile's node directories, each mounted at its
// own path, and whether dir lies on one of them.
func hostPathVolumes(w plan.Workload, dir string) (mounts, volumes []any, covers bool) {
	for _, h := range w.Profile.K8s.HostPaths {
		mounts = append(mounts, om("name", h.Name, "mountPath", h.Path))
		volumes = append(volumes, om("name", h.Name, "hostPath", om("path", h.Path, "type", "DirectoryOrCreate")))
		covers = covers || under(dir, h.Path)
	}
	return mounts, volumes, covers
}

// nvidiaPodSpec is perf-eval's nvidia pod: the profile's host paths (by
// default the node's /raid and /mnt/shared). An
// hf-cache volume is mounted at HF_HOME only when <PROFILE>_HF_CACHE_VOLUME
// is set or HF_HOME is on none of the host paths (so the default emptyDir
// never hides the shared cache).
func nvidiaPodSpec(w plan.Workload, home string, override map[string]any) *omap {
	hostMounts, hostVolumes, onHost := hostPathVolumes(w, home)
	mounts := append([]any{om("name", "devshm", "mountPath", "/dev/shm")}, hostMounts...)
	volumes := append([]any{om("name", "devshm", "emptyDir", om("medium", "Memory"))}, hostVolumes...)
	if override != nil || !onHost {
		mounts = append(mounts, om("name", "hf-cache", "mountPath", home))
		volumes = append(volumes, hfCacheVolume(w, override))
	}
	container := om(
		"image", w.Image.Pull,
		"resources", om("limits", om("nvidia.com/gpu", w.GPUs)),
		"securityContext", om("capabilities", om("add", []any{"IPC_LOCK", "SYS_RESOURCE"})),
		"volumeMounts", mounts,
		"env", podEnv(w, home),
	)
	spec := om(
		"runtimeClassName", "nvidia",
		"hostNetwork", true,
		"dnsPolicy", "ClusterFirstWithHostNet",
	)
	if s := imagePullSecrets(w); s != nil {
		spec.Set("imagePullSecrets", s)
	}
	spec.Set("containers", []any{container})
	spec.Set("volumes", volumes)
	return spec
}

// amdPodSpecPatch is perf-eval's AMD patch of the controller's container-0:
// the AMD device plugin's GPUs, an unconfined seccomp profile, /dev/shm in
// memory and the hf-cache volume at HF_HOME (#35).
func amdPodSpecPatch(w plan.Workload, home string, override map[string]any) *omap {
	hostMounts, hostVolumes, _ := hostPathVolumes(w, home)
	container := om(
		"name", "container-0",
		"image", w.Image.Pull,
		"resources", om("limits", om("amd.com/gpu", w.GPUs)),
		"securityContext", om(
			"seccompProfile", om("type", "Unconfined"),
			"capabilities", om("add", []any{"IPC_LOCK", "SYS_PTRACE"}),
		),
		"volumeMounts", append([]any{
			om("name", "devshm", "mountPath", "/dev/shm"),
			om("name", "hf-cache", "mountPath", home),
		}, hostMounts...),
		"env", podEnv(w, home),
	)
	patch := om()
	if s := imagePullSecrets(w); s != nil {
		patch.Set("imagePullSecrets", s)
	}
	patch.Set("containers", []any{container})
	patch.Set("volumes", append([]any{
		om("name", "devshm", "emptyDir", om("medium", "Memory")),
		hfCacheVolume(w, override),
	}, hostVolumes...))
	return patch
}
