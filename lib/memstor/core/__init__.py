"""The bottom layer: what every stage may use and nothing of memstor's above it.

errors (the one-line user errors), schema (column contracts), units (sizes, durations, decimal MB),
validate (typed parameter checks), files (atomic writes, JSON files, locks, UTC stamps), profiles
(params/<profile>.yaml read as YAML, --set overrides), fmt (number and interval formatting) and the
statistics every stage shares: fiohist (fio's latency histogram: bins, merging, percentiles by fio's rule,
the processed bins table's columns) and batchmeans (one run's 95 % interval by batch means). Imports: the
standard library and third-party packages only.
"""
