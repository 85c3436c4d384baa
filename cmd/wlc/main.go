// Command wlc compiles typed GPU benchmark workloads (CUE) into CI jobs:
// Buildkite pipelines, Slurm sbatch scripts and docker-run scripts.
package main

import (
	"os"
	"runtime/debug"
)

func main() {
	// CUE's values are a large, pointer-rich live graph that every
	// collection re-marks: at Go's default (GOGC=100) a 1,000-workload
	// vet spent a quarter of its CPU marking. The sharded load keeps at
	// most GOMAXPROCS shards alive, so a heap three times the live one
	// stays small (290 MB at 1,000 workloads); --max-memory still caps it
	// (budget.Run sets the memory limit). GOGC in the environment wins.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(200)
	}
	os.Exit(Process())
}
