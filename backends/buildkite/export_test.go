package buildkite

import (
	"github.com/buildkite/go-pipeline"

	"github.com/wlcdev/wlc/backends"
	"github.com/wlcdev/wlc/internal/plan"
)

// EncodeDirect is the direct writer alone (errSlowPath included).
func EncodeDirect(header string, p *pipeline.Pipeline) ([]byte, error) {
	w := newYAMLWriter(0)
	if err := w.pipeline(header, p); err != nil {
		return nil, err
	}
	return w.b, nil
}

// EncodeYAMLv3 is the slow path, the direct writer's oracle.
var EncodeYAMLv3 = encodeYAMLv3

// ErrSlowPath is errSlowPath.
var ErrSlowPath = errSlowPath

// Pipelines is what Lower encodes: each upload's header and pipeline.
func (b *Backend) Pipelines(ws []plan.Workload, opts backends.Options) (headers []string, ps []*pipeline.Pipeline, err error) {
	parts, _, err := b.pipelines(ws, opts)
	for _, pt := range parts {
		headers = append(headers, pt.header)
		ps = append(ps, pt.p)
	}
	return headers, ps, err
}
