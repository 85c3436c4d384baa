package load

// WithShardFiles returns o with at most n workload files per shard (a
// negative n never shards), for tests comparing the two loads.
func WithShardFiles(o Options, n int) Options {
	o.shardFiles = n
	return o
}

// WithEvaluateOnly returns o stopping each shard once CUE has evaluated
// it (see Options.evaluateOnly).
func WithEvaluateOnly(o Options) Options {
	o.evaluateOnly = true
	return o
}

// Shards is how many shards the load evaluated (0: the package as one).
func (r *Result) Shards() int { return r.shards }
