"""Turn the config (or ``--simulate``) into sources: what every host-reading command calls."""

from __future__ import annotations

import dataclasses
import socket
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from sgmon import registry
from sgmon.collector import Collector, Unavailable
from sgmon.config import Config, DbConfig, HostConfig
from sgmon.errors import ConfigError
from sgmon.hosts import Source

if TYPE_CHECKING:
    from sgmon.readers.inet_diag import Selection
    from sgmon.remote.mirror import Shipped


class _Missing(Collector):
    """Stands in for a collector whose module failed to import, so the reason is shown."""

    def __init__(self, name: str, reason: str) -> None:
        super().__init__()
        self.name = name  # type: ignore[misc]
        self._reason = reason

    def open(self) -> None:
        """Always unavailable, with the import error as the reason."""
        raise Unavailable(self._reason)


def make_collectors(
    config: Config, host: HostConfig | None, only: Callable[[str], bool] | None = None
) -> list[Collector]:
    """Instantiate the local collectors with their options (ConfigError propagates); with
    ``only``, just those whose name it accepts (a collector not built checks nothing here).

    The database collectors (``oracle_*``) run where the host has a database; the trace reader
    runs when [collectors.oracle_trace] names the trace files, with or without a database login
    (reading a trace needs file access only); any other runs
    when it is enabled by default or named in the config's [collectors] table, unless that
    table says ``enabled = false``.
    """
    has_db = host is not None and host.db is not None
    out: list[Collector] = []
    for name in registry.names():
        if only is not None and not only(name):
            continue
        if name == "oracle_trace":
            if not config.collectors.get(name):
                continue  # needs the trace paths; unconfigured it would only say so every tick
        elif name.startswith("oracle_") and not has_db:
            continue
        if config.collectors.get(name, {}).get("enabled") is False:
            continue
        try:
            cls = registry.load(name)
        except Exception as e:  # a broken plug-in is reported, never fatal
            out.append(_Missing(name, f"cannot import: {e}"))
            continue
        wanted = cls.default_enabled or name in config.collectors or name.startswith("oracle_")
        if not wanted:
            continue
        out.append(cls(host_options(config, name, host)))
    return out


def host_options(config: Config, name: str, host: HostConfig | None) -> dict[str, Any]:
    """The options one collector gets on one host: its config table and the DG settings, plus
    the host's name, role, pinned redo devices and database."""
    opts: dict[str, Any] = config.collector_options(name)
    if host is not None:
        opts.setdefault("host", host.name)
        opts.setdefault("role", host.role)
        if host.devices:
            opts.setdefault("pinned", list(host.devices))
        if host.db is not None:
            opts["db"] = host.db
        if host.root:
            opts.setdefault("root", host.root)  # a collector's own table may still say otherwise
    return opts


def _ask_passwords(dbs: list[DbConfig | None]) -> None:
    """Prompt on the main thread, before any full-screen UI owns the terminal."""
    if not any(db is not None and db.password == "prompt" for db in dbs):
        return
    from sgmon.oracle.session import OracleError, ask_passwords

    try:
        ask_passwords(dbs)
    except OracleError as e:
        raise ConfigError(str(e)) from None


def sources_from_config(
    config: Config,
    simulate: str | None = None,
    seed: int = 0,
    speed: float = 1.0,
    duration: float | None = None,
    interval: float | None = None,
    role: str = "",
    onset: float | None = None,
) -> list[Source]:
    """Sources for the configured hosts, or the simulated pair when ``simulate`` names a scenario.

    Without hosts in the config, this machine is watched alone under its hostname.  ``role``
    goes to the hosts whose config names none (an agent's: the role its consumer has for it).
    """
    interval = interval or config.interval
    if simulate:
        from sgmon.hosts.sim import SimSource
        from sgmon.sim import DEFAULT_ONSET

        start = DEFAULT_ONSET if onset is None else onset
        return [SimSource(simulate, seed, interval, speed, duration=duration, onset=start)]
    from sgmon.hosts.local import LocalSource

    hosts = config.hosts or (HostConfig(name=socket.gethostname()),)
    named = bool(config.hosts)  # else the collectors get no host options
    if role:
        hosts, named = tuple(dataclasses.replace(h, role=h.role or role) for h in hosts), True
    _ask_passwords([h.db for h in hosts if not h.ssh or h.db_from == "local"])
    sources: list[Source] = []
    for h in hosts:
        if h.ssh:
            sources.append(_remote(config, h, interval))
        else:
            sources.append(
                LocalSource(
                    make_collectors(config, h if named else None),
                    interval,
                    name=h.name,
                    role=h.role,
                    duration=duration,
                )
            )
    return sources


def _reads_database(name: str) -> bool:
    """A collector that reads the host's database over SQL*Net (the trace reader reads files
    on the host)."""
    return name.startswith("oracle_") and name != "oracle_trace"


NEEDS_AGENT = ("biolat",)
"""Collectors that run a tracing program on the host itself."""
NOT_PUMPED = "needs sgmon installed on the host (sgmon_path): the pump ships /proc files only"


def _remote(config: Config, host: HostConfig, interval: float) -> Source:
    """An ssh host: the pump, or the installed agent where ``sgmon_path`` names it; its
    database collectors run here unless ``db_from = "agent"`` (they tick with the host's
    frames, so both are one host on one time axis)."""
    from sgmon.hosts.remote import PumpSource, RemoteSource
    from sgmon.oracle.tracefiles import followed

    database = None
    if host.db is not None and host.db_from == "local":
        # only the database collectors are built here: an OS collector built on this machine
        # would check the host's devices against this machine's /proc
        database = make_collectors(config, host, _reads_database)
    if host.sgmon_path:
        return RemoteSource(host, interval=interval, database=database)  # both hosts tick alike

    def os_side(root: str) -> list[Collector]:
        """The collectors reading the pump's mirror of the host: /proc, and the traces."""
        mirrored = dataclasses.replace(host, root=root, db=None)
        return [
            _Missing(c.name, NOT_PUMPED) if c.name in NEEDS_AGENT else c
            for c in make_collectors(config, mirrored)
            if c.name == "oracle_trace" or not c.name.startswith("oracle_")
        ]

    trace = config.collectors.get("oracle_trace", {})
    tails = tuple(followed(k, str(trace[k])) for k in ("lgwr", "nss", "rfs") if trace.get(k))
    return PumpSource(
        host,
        os_side,
        pumped_sockets(config, host),
        shipped(),
        tails,
        interval=interval,
        database=database,
        trace=pumped_trace(config, host),
        processes=pumped_processes(config, host),
    )


def pumped_sockets(config: Config, host: HostConfig) -> Selection | None:
    """The DG sockets a pump finds on the host: the tcp collector's own selection, from its
    options there (ConfigError when they are wrong); None where it does not run."""
    return _asked(config, host, "tcp", "remote_selection")


def pumped_trace(config: Config, host: HostConfig) -> dict[str, Any] | None:
    """The tracepoints a pump records on the host: the retrans collector's own."""
    return _asked(config, host, "retrans", "remote_trace")


def pumped_processes(config: Config, host: HostConfig) -> dict[str, Any] | None:
    """The processes a pump follows on the host: the procs collector's own."""
    return _asked(config, host, "procs", "remote_processes")


def _asked(config: Config, host: HostConfig, name: str, method: str) -> Any:
    """What collector ``name`` asks a pump for, from its options on the host (ConfigError when
    they are wrong; built here, it checks its options only, nothing of this machine's); None
    where it does not run."""
    built = make_collectors(config, dataclasses.replace(host, root=""), lambda n: n == name)
    # a collector that could not be imported, or a plug-in in its place, may ask for none
    ask = getattr(built[0], method, None) if built else None
    return ask() if ask is not None else None


def _os_collectors() -> list[type[Collector]]:
    """The classes of the collectors that read the host's own files (not its database)."""
    out = []
    for name in registry.names():
        if name.startswith("oracle_"):
            continue
        try:
            out.append(registry.load(name))
        except Exception:  # a broken plug-in is reported by make_collectors, never fatal
            continue
    return out


def lines_read() -> dict[str, str]:
    """Host file -> the lines of it any OS collector reads (Collector.lines, one alternation):
    what a pump ships of that file."""
    out: dict[str, list[str]] = {}
    for cls in _os_collectors():
        for path, pattern in cls.lines.items():
            out.setdefault(path, []).append(pattern)
    return {path: "|".join(patterns) for path, patterns in out.items()}


def shipped() -> Shipped:
    """What a pump ships of a host's files: those the OS collectors declare
    (``remote_files``), and of some only the lines they read (``lines_read``)."""
    from sgmon.remote.mirror import Shipped

    declared = (cls.remote_files for cls in _os_collectors())
    return Shipped.declared(declared, lines_read())
