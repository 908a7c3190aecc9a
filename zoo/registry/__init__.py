"""The zoo engine: plugin loading, catalog, targets, keys, cache, pipeline and remotes."""
