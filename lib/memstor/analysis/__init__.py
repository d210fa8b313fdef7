"""Pure DataFrame -> DataFrame: summaries (n, mean, 95 % CI), storage and memory analysis, queueing models, specs, synthesis."""
