"""The current trace files as the database names them: ``V$DIAG_INFO`` gives the trace
directory (``Diag Trace``) and ``V$PROCESS`` each background process's name and OS pid, which
name its trace ``<instance>_<pname>_<spid>.trc``.

The trace reader asks only through a session that another database collector of the host has
already connected: it never connects itself, so a database that hangs at connect cannot hold the
trace reader (which needs no login at all) and a host without a login globs instead.  The two
queries join the session's named queries (queries.py) from here, as only this reader uses them.
"""

from __future__ import annotations

import os

from sgmon.oracle import queries
from sgmon.oracle.errors import OracleError
from sgmon.oracle.session import Session
from sgmon.oracle.tracefiles import PROCESSES, TraceName

queries.QUERIES.update(
    {
        "diag_trace": {(11, 1): "SELECT value FROM v$diag_info WHERE name = 'Diag Trace'"},
        "processes": {(11, 1): "SELECT pname, spid FROM v$process WHERE pname IS NOT NULL"},
    }
)


class Layout:
    """The trace directory, instance name and (process name, OS pid) list of one database."""

    def __init__(self, trace_dir: str, sid: str, processes: list[tuple[str, int]]) -> None:
        self.trace_dir = trace_dir
        self.sid = sid
        self.processes = processes

    def files(self, kind: str) -> dict[str, str]:
        """Group -> trace path of every process of this kind (LGWR and the LGnn for ``lgwr``;
        every RFS, one per connected client, for ``rfs``)."""
        out: dict[str, str] = {}
        for pname, spid in self.processes:
            proc = pname.lower()
            if PROCESSES[kind].fullmatch(proc):
                name = TraceName(self.sid, proc, spid)
                group = f"{name.group}_{spid}" if kind == "rfs" else name.group
                out[group] = os.path.join(self.trace_dir, f"{self.sid}_{proc}_{spid}.trc")
        return out


def layout(session: Session) -> Layout | None:
    """Read the layout through an already connected session; None when it is not connected or
    the views are not readable (the session notes that once)."""
    if not session.connected:
        return None
    try:
        inst = session.query("instance")
        diag = session.query("diag_trace")
        procs = session.query("processes")
    except OracleError:
        return None
    if not inst or not diag or procs is None:
        return None
    found = [(str(p), int(s)) for p, s in procs if p and str(s).isdigit()]
    return Layout(str(diag[0][0]), str(inst[0][0]), found)
