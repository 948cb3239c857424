"""The Data Guard TCP sockets like ss -tin: rto, rtt, retransmits, queues, the owning process."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.text import Text

from sgmon.fields import TCP
from sgmon.tui.draw import graph_width, grid, pairs, spark_row, title
from sgmon.tui.fit import fit
from sgmon.tui.panels.base import Panel, labelled
from sgmon.tui.view import PaneView

COLUMNS = labelled(
    TCP.rtt,
    (TCP.rttvar, "var"),
    TCP.rto,
    TCP.cwnd,
    (TCP.unacked, "unack"),
    (TCP.retransmits, "retx"),
    (TCP.send_q, "send-q"),
)
WIDE = labelled(TCP.lost, (TCP.retrans, "rtx-now"))
"""ss's lost and retrans (segments in flight resent), which the rto_stall finding cites: shown
where the pane has room for them."""
WIDE_FROM = 92
TOP = 3
HOST = TCP.Rows.host.instance(None)
"""The host-wide counters' row."""
SPARKS = ((TCP.rtt, "rtt ms"), (TCP.retransmits, "retx"))
"""The first socket's series drawn under the table."""


def sockets(view: PaneView) -> list[str]:
    """DG sockets that pass the filter, the most retransmitting first."""
    rows = view.rows(TCP.name)
    names = [n for n in rows if not TCP.Rows.host.matches(n) and view.matches(n)]
    return sorted(names, key=lambda n: (-(TCP.retransmits.of(rows[n]) or 0.0), n))


def render_sockets(view: PaneView, width: int) -> RenderableType:
    """Socket table, host-wide retransmit counters and an rtt sparkline of the first socket."""
    p = view.palette
    names = sockets(view)
    shown = names if width > 110 else names[:TOP]
    head = title(p, "DG SOCKETS", f"{len(names)} sockets, ms")
    problem = view.collector_problem(TCP.name)
    if problem is not None:
        return Group(head, problem)
    rows_out = []
    columns = (*COLUMNS, *WIDE) if width >= WIDE_FROM else COLUMNS
    for n in shown:
        peer = str(view.value(TCP.peer, n) or n.partition(">")[2])
        proc = str(view.value(TCP.process, n) or "")
        cells = [view.cell(f, n) for f, _ in columns]
        rows_out.append([Text(fit(peer, 21, "middle")), *cells, Text(fit(proc, 14))])
    headers = ["peer", *(lab for _, lab in columns), "process"]
    parts: list[RenderableType] = [head, *grid(p, headers, rows_out, right_from=1)]
    host = pairs(
        p,
        [
            ("host retx/s", view.cell(TCP.retrans_segs, HOST)),
            ("rto-expiries/s", view.cell(TCP.timeouts, HOST)),
        ],
    )
    parts.append(host)
    if names:
        n = names[0]
        for f, lab in SPARKS:
            parts.append(
                spark_row(
                    p,
                    lab,
                    view.series(f, n, graph_width(width)),
                    width,
                    view.judge(f),
                    highlighted=view.marked(f, n),
                )
            )
    return Group(*parts)


class SocketsPanel(Panel):
    """The DG sockets: rto, rtt, retransmits."""

    render_view = staticmethod(render_sockets)
    needs = TCP.name
    filters = TCP.name
