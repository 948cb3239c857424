"""Collector discovery through the ``sgmon.collectors`` entry-point group.

Names are listed without importing any collector module; ``load`` imports exactly one.  The
built-in collectors are listed here, once; a third-party distribution adds a collector by
declaring an entry point in the group (a name it shares with a built-in replaces it).
"""

from __future__ import annotations

from functools import cache
from importlib import import_module
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sgmon.collector import Collector

GROUP = "sgmon.collectors"

_BUILTIN = {  # the built-in collectors, the one list of them
    "cpu": "collectors.cpu:CpuCollector",
    "paging": "collectors.paging:PagingCollector",
    "disk": "collectors.disk:DiskCollector",
    "netdev": "collectors.netdev:NetdevCollector",
    "tcp": "collectors.tcp:TcpCollector",
    "procs": "collectors.procs:ProcsCollector",
    "biolat": "collectors.biolat:BiolatCollector",
    "retrans": "collectors.retrans:RetransCollector",
    "oracle_waits": "collectors.oracle.waits:OracleWaitsCollector",
    "oracle_redo": "collectors.oracle.redo:OracleRedoCollector",
    "oracle_dg": "collectors.oracle.dg:OracleDgCollector",
    "oracle_trace": "collectors.oracle.trace:OracleTraceCollector",
}


@cache
def targets() -> dict[str, str]:
    """Collector name -> ``module:Class``, built-ins first, without importing them."""
    from importlib.metadata import entry_points  # 25-35 ms of imports (email, zipfile, csv)

    found = dict(_BUILTIN)
    for ep in entry_points(group=GROUP):
        found[ep.name] = ep.value
    return found


def builtin_names() -> list[str]:
    """The built-in collector names, in their one list's order, without looking for plugins."""
    return list(_BUILTIN)


def names() -> list[str]:
    """Installed collector names."""
    return list(targets())


def load(name: str) -> type[Collector]:
    """Import one collector class; an unknown name raises KeyError listing the known ones."""
    try:
        target = targets()[name]
    except KeyError:
        raise KeyError(f"unknown collector {name!r}; installed: {', '.join(names())}") from None
    return _imported(target)


def builtin(name: str) -> type[Collector]:
    """One built-in collector class, whatever a plugin installed under its name: for rows that
    are the built-in's by construction (the simulation's), and without looking for plugins,
    which costs the demo's start 30-40 ms."""
    return _imported(_BUILTIN[name])


def _imported(target: str) -> type[Collector]:
    module, _, attr = target.partition(":")
    cls: type[Collector] = getattr(import_module(module), attr)
    return cls
