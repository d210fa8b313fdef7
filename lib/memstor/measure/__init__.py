"""The measuring layer: everything that runs a tool, reads the machine or writes raw data.

Layer: imports memstor.parse and memstor.core only (never analysis, report, experiments or cli); the
experiments drive it. Modules by topic:

- sweep (resumable grid of points, one raw file + meta per point, manifest; a SweepSession carries what the
  sweeps of one run share and counts what they measured), progress (plan line and progress bar);
- fio (job spec, command line, FioRunner), fio_engine (binary, version, ioengine and O_DIRECT probes),
  fio_output (fio's JSON checked), fio_process (running, watching and stopping fio), openloop (rate-driven
  jobs, submit-mode probe), precision (stop a point once its interval is narrow enough);
- mlc and loadlat (the MLC-compatible runners);
- target (safe test files and raw devices), device (which medium a run measures and its folder name),
  drive (the drive's identity and health), sysinfo (the machine description);
- sysfs (every ``/proc`` and ``/sys`` reader, under an injectable root) and tools (the time-boxed tool runner);
- fleet, fleet_hosts, fleet_target, fleet_sweep (one fio point on many hosts over SSH at once).
"""
