// Package recipe holds the CUE schema of the upstream vLLM recipes
// (recipe.cue, CUE package recipe), apart from the workload schema so that
// loading workloads never evaluates it. It imports the workload schema for
// the hardware catalog and #Precision.
package recipe

import "embed"

// Files are the package's .cue sources.
//
//go:embed *.cue
var Files embed.FS

// ImportPath is the CUE import path of this package.
const ImportPath = "github.com/wlcdev/wlc/schema/recipe"
