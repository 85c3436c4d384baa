// Command wlc compiles typed GPU benchmark workloads (CUE) into CI jobs:
// Buildkite pipelines, Slurm sbatch scripts and docker-run scripts.
package main

import "os"

func main() { os.Exit(Process()) }
