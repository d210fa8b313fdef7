"""memstor — a reproducible lab for memory and storage performance profiling."""

__version__ = "0.1.0"
