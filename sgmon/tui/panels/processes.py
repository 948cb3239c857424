"""The Oracle processes on the commit path under their DBA names: CPU, run-queue delay, state.

LGWR's run-queue delay (ms per second runnable but not running) is seed 000's commit step 2
measured; RFS in D with its wchan is seed 003's standby I/O seen from the process.  The commit
path's own processes come first (LGWR and its workers, NSS/LNS, RFS), then the rest by CPU.
"""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.text import Text

from sgmon.fields import PROCS
from sgmon.tui.draw import grid, title
from sgmon.tui.fit import fit
from sgmon.tui.panels.base import Panel
from sgmon.tui.view import PaneView

COLUMNS = (
    (PROCS.cpu, "cpu%"),
    (PROCS.runq, "runq ms/s"),
    (PROCS.io_delay, "io ms/s"),
    (PROCS.nvcsw, "preempt/s"),
    (PROCS.write_kb, "wkB/s"),
)
PATH = ("LGWR", "LG", "NSS", "LNS", "RFS", "MRP", "PR", "TT")
"""Name prefixes in commit-path order (LG matches the LGnn workers)."""
TOP = 6


def ordered(view: PaneView) -> list[str]:
    """The commit path's processes in chain order, then the others by CPU."""
    rows = view.rows(PROCS.name)

    def key(name: str) -> tuple[int, float, str]:
        rank = next((i for i, p in enumerate(PATH) if name.startswith(p)), len(PATH))
        return rank, -(PROCS.cpu.of(rows[name]) or 0.0), name

    return sorted((n for n in rows if view.matches(n)), key=key)


def render_processes(view: PaneView, width: int) -> RenderableType:
    """One row per process: name, state (with wchan in D), then the columns."""
    p = view.palette
    rows = view.rows(PROCS.name)
    names = ordered(view)
    shown = names if width > 110 else names[:TOP]
    head = title(p, "PROCESSES", f"{len(shown)}/{len(rows)} on the commit path")
    problem = view.collector_problem(PROCS.name)
    if problem is not None:
        return Group(head, problem)
    if not rows:
        return Group(head, Text("  no Oracle process found (ora_lgwr_<SID> ...)", p.muted))
    out = []
    for n in shown:
        state = str(PROCS.state.raw(rows[n]) or "")
        wchan = PROCS.wchan.raw(rows[n])
        said = Text(fit(f"{state} {wchan}" if state == "D" and wchan else state, 10))
        if state == "D":
            said.stylize(p.sev("warn"))
        out.append([Text(fit(n, 12, "middle")), said, *(view.cell(f, n) for f, _ in COLUMNS)])
    return Group(head, *grid(p, ["process", "state", *(lab for _, lab in COLUMNS)], out))


class ProcessesPanel(Panel):
    """LGWR, NSS, RFS and their kin."""

    render_view = staticmethod(render_processes)
    needs = PROCS.name
    filters = PROCS.name
