// Package bktest checks generated Buildkite pipelines with Buildkite's own
// tools, for the Buildkite backend's golden tests. Three independent checks:
//
//   - ValidateSchema: Buildkite's pipeline JSON schema (field names, types,
//     step shapes), read from the reference corpus (SchemaFile).
//   - RoundTrip: github.com/buildkite/go-pipeline, the parser the agent is
//     built on; no warnings allowed, and no step content may be lost.
//   - DryRun: the real buildkite-agent v3.78.0 `pipeline upload --dry-run`,
//     which adds upload-time `$` interpolation and the agent's own warnings
//     (secrets in the pipeline, unparseable steps) and needs no network.
//
// AgentAPI stands in for the Agent API the real agent talks to inside a job
// (artifact upload and download, pipeline upload), so tests run a step's
// command with the real agent as Buildkite would.
//
// Interpolated shows what go-pipeline's Interpolate does to `$` so tests can
// pin the escaping rules. Each helper that takes a testing.TB has an
// error-returning twin (CheckSchema, CheckRoundTrip, RunDryRun, Interpolate)
// for tests that expect a pipeline to be rejected.
package bktest
