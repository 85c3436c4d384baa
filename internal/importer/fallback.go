package importer

import (
	"fmt"
	"sync"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/cuecontext"

	"github.com/wlcdev/wlc/schema"
)

// catalog is the schema's hardware catalog (hardware.cue): which
// architecture a GPU is, and how vLLM runs each precision there.
var catalog = sync.OnceValues(func() (map[string]schema.Hardware, map[string]schema.ArchitectureFacts) {
	inst, err := schema.Instance()
	if err != nil {
		return nil, nil
	}
	v := cuecontext.New().BuildInstance(inst)
	var hw map[string]schema.Hardware
	var archs map[string]schema.ArchitectureFacts
	if v.LookupPath(cue.ParsePath("hardware")).Decode(&hw) != nil || v.LookupPath(cue.ParsePath("architectures")).Decode(&archs) != nil {
		return nil, nil
	}
	return hw, archs
})

// fallbackPath marks a precision the original's GPU runs only through a
// fallback kernel: perf-eval ran it so, and wlc runs one only when the
// workload says precision_path: "fallback". The gpu is looked up as a
// hardware id (perf-eval's gpu names are, for most fleets).
func (c *conv) fallbackPath(w *workload, prec string) {
	hw, archs := catalog()
	h, ok := hw[w.profile]
	if !ok {
		return
	}
	if s, ok := archs[h.Architecture].Weights[prec]; ok && s.Path == "fallback" {
		w.add([]string{fmt.Sprintf("perf-eval ran it on %s, which runs %s through a fallback kernel (%s).", w.profile, prec, s.Kernel)}, `precision_path: "fallback"`)
	}
}
