"""The Data Guard TCP sockets like ss -tin: rto, rtt, retransmits, queues, the owning process."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.text import Text

from sgmon.model import number
from sgmon.tui.draw import graph_width, grid, pairs, spark_row, title
from sgmon.tui.fit import fit
from sgmon.tui.panels.base import Panel
from sgmon.tui.view import PaneView

COLUMNS = (
    ("rtt", "rtt"),
    ("rttvar", "var"),
    ("rto", "rto"),
    ("cwnd", "cwnd"),
    ("unacked", "unack"),
    ("retransmits", "retx"),
    ("send_q", "send-q"),
)
WIDE = (("lost", "lost"), ("retrans", "rtx-now"))
"""ss's lost and retrans (segments in flight resent), which the rto_stall finding cites: shown
where the pane has room for them."""
WIDE_FROM = 92
TOP = 3


def sockets(view: PaneView) -> list[str]:
    """DG sockets that pass the filter, the most retransmitting first."""
    rows = view.rows("tcp")
    names = [n for n in rows if n != "host" and view.matches(n)]
    return sorted(names, key=lambda n: (-(number(rows[n].get("retransmits")) or 0.0), n))


def render_sockets(view: PaneView, width: int) -> RenderableType:
    """Socket table, host-wide retransmit counters and an rtt sparkline of the first socket."""
    p = view.palette
    names = sockets(view)
    shown = names if width > 110 else names[:TOP]
    head = title(p, "DG SOCKETS", f"{len(names)} sockets, ms")
    problem = view.collector_problem("tcp")
    if problem is not None:
        return Group(head, problem)
    rows_out = []
    columns = (*COLUMNS, *WIDE) if width >= WIDE_FROM else COLUMNS
    for n in shown:
        peer = str(view.value("tcp", n, "peer") or n.partition(">")[2])
        proc = str(view.value("tcp", n, "process") or "")
        cells = [view.cell("tcp", n, f) for f, _ in columns]
        rows_out.append([Text(fit(peer, 21, "middle")), *cells, Text(fit(proc, 14))])
    headers = ["peer", *(lab for _, lab in columns), "process"]
    parts: list[RenderableType] = [head, *grid(p, headers, rows_out, right_from=1)]
    host = pairs(
        p,
        [
            ("host retx/s", view.cell("tcp", "host", "retrans_segs")),
            ("rto-expiries/s", view.cell("tcp", "host", "timeouts")),
        ],
    )
    parts.append(host)
    if names:
        n = names[0]
        for f, lab in (("rtt", "rtt ms"), ("retransmits", "retx")):
            parts.append(
                spark_row(
                    p,
                    lab,
                    view.series("tcp", n, f, graph_width(width)),
                    width,
                    view.judge("tcp", f),
                    highlighted=("tcp", n, f) in view.highlight,
                )
            )
    return Group(*parts)


class SocketsPanel(Panel):
    """The DG sockets: rto, rtt, retransmits."""

    render_view = staticmethod(render_sockets)
    needs = "tcp"
    filters = "tcp"
