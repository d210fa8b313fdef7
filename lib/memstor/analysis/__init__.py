"""Pure tables -> tables: the analysis layer.

Layer: imports memstor.parse and memstor.core only (never measure, experiments, report or cli), and reads
nothing but ``data/processed/`` (never ``data/raw/``): a copied processed folder gives the same tables.
Modules by topic: dataset (load a data folder: processed tables, bins tables, sysinfo, provenance),
summary (one summary path: n, mean, 95 % CI per configuration), storage and histograms (fio points,
latency CDFs and percentiles from the processed bins tables), points (the storage points the synthesis
picks), cluster (fleet aggregates), hosts (one device at a time), memory, memory_curves, memory_fit
(loaded-latency curves and checks), curves, curve_model, storage_fit (the one latency–throughput curve
analysis and its open-queue fit), queueing, openloop, queue_sim, load_latency (Little's law, knees, open-loop
models and the SLO answer), adaptive_grid (the queue-depth grid's rules), steady_state (SNIA's window rule),
drive (identity, link and health tables), specs (spec sheets under matched conditions) and synthesis (every
table of the report).
"""
