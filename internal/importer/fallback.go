package importer

import (
	"fmt"
	"sync"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/cuecontext"

	"github.com/wlcdev/wlc/schema"
)

// hardwareCatalog is the schema's hardware catalog (hardware.cue): which
// architecture a GPU is, and how vLLM runs each precision there.
type hardwareCatalog struct {
	hardware      map[string]schema.Hardware
	architectures map[string]schema.ArchitectureFacts
	ids           []string // the hardware ids, in the catalog's order
}

// catalog is built once from the schema embedded in wlc.
var catalog = sync.OnceValue(func() hardwareCatalog {
	inst, err := schema.Instance()
	if err != nil {
		return hardwareCatalog{}
	}
	v := cuecontext.New().BuildInstance(inst)
	var c hardwareCatalog
	hw := v.LookupPath(cue.ParsePath("hardware"))
	if hw.Decode(&c.hardware) != nil || v.LookupPath(cue.ParsePath("architectures")).Decode(&c.architectures) != nil {
		return hardwareCatalog{}
	}
	for it, _ := hw.Fields(); it != nil && it.Next(); {
		c.ids = append(c.ids, it.Selector().Unquoted())
	}
	return c
})

// fallbackPath marks a precision the original's GPU runs only through a
// fallback kernel: perf-eval ran it so, and wlc runs one only when the
// workload says precision_path: "fallback". The gpu is looked up as a
// hardware id (perf-eval's gpu names are, for most fleets).
func (c *conv) fallbackPath(w *workload, prec string) {
	cat := catalog()
	h, ok := cat.hardware[w.profile]
	if !ok {
		return
	}
	if s, ok := cat.architectures[h.Architecture].Weights[prec]; ok && s.Path == "fallback" {
		w.add([]string{fmt.Sprintf("perf-eval ran it on %s, which runs %s through a fallback kernel (%s).", w.profile, prec, s.Kernel)}, `precision_path: "fallback"`)
	}
}
