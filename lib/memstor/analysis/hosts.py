"""One device at a time: split a table by its ``host`` column so that nothing is pooled across devices.

A fleet run (``--hosts``) returns the rows of every host in one table. The experiment notebooks' summaries
and figures describe ONE device each (an idle latency, a best IOPS, a latency CDF); given several hosts they
must describe each host on its own, never a mean over machines that are not repetitions of one another.
:func:`each_host` makes a one-device function do that; :func:`by_host` is the split itself.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import pandas as pd

#: The column naming the device (the host label of the data folders).
HOST = "host"


def hosts_of(table) -> list[str]:
    """The distinct hosts of a table, in order of appearance ([] without a host column or rows)."""
    if not isinstance(table, pd.DataFrame) or HOST not in table.columns or table.empty:
        return []
    return [str(h) for h in pd.unique(table[HOST].dropna().astype(str))]


def by_host(table: pd.DataFrame) -> list[tuple[str, pd.DataFrame]]:
    """[(host, its rows)] in order of appearance; [("", table)] when the table names one host or none."""
    hosts = hosts_of(table)
    if len(hosts) <= 1:
        return [(hosts[0] if hosts else "", table)]
    return [(h, table[table[HOST].astype(str) == h]) for h in hosts]


def only_host(value, host: str):
    """`value` restricted to `host` when it is a DataFrame with a host column, else `value` unchanged."""
    if isinstance(value, pd.DataFrame) and HOST in value.columns:
        return value[value[HOST].astype(str) == host]
    return value


def split_call(fn: Callable, table, args: tuple, kw: dict) -> list[tuple[str, Any]] | None:
    """``fn(table, *args, **kw)`` once per host of `table` (DataFrame arguments with a host column restricted
    to that host too): [(host, result)]; None when the table names one host or none (call it as it is)."""
    parts = by_host(table)
    if len(parts) == 1:
        return None
    return [(h, fn(rows, *[only_host(a, h) for a in args], **{k: only_host(v, h) for k, v in kw.items()}))
            for h, rows in parts]


def each_host(fn: Callable) -> Callable:
    """Decorator for a function of ONE device's table ``fn(table, *args, **kw)``: with one host (or no host
    column) it is called as it is; with several it is called on each host's rows (DataFrame arguments with a
    host column are restricted to that host too) and the results are put together per host:

    - DataFrame: concatenated, with a ``host`` column first (kept when the result has one already);
    - Series: concatenated under a (host, ...) MultiIndex;
    - str: one paragraph per host, ``**host**: text``;
    - anything else: a dict {host: result}."""

    @functools.wraps(fn)
    def wrapper(table, *args, **kw):
        results = split_call(fn, table, args, kw)
        if results is None:
            return fn(table, *args, **kw)
        first = results[0][1]
        if isinstance(first, pd.DataFrame):
            frames = [r if HOST in r.columns else r.assign(**{HOST: h})[[HOST, *r.columns]] for h, r in results]
            return pd.concat(frames, ignore_index=True)
        if isinstance(first, pd.Series):
            return pd.concat({h: r for h, r in results}, names=[HOST])
        if isinstance(first, str):
            return "\n\n".join(f"**{h}**: {r}" for h, r in results)
        return {h: r for h, r in results}

    return wrapper
