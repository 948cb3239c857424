"""Network interfaces like sar -n DEV / EDEV: throughput, errors and drops, busiest first."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.text import Text

from sgmon.fields import NETDEV
from sgmon.tui.draw import grid, title
from sgmon.tui.fit import fit
from sgmon.tui.panels.base import Panel
from sgmon.tui.view import PaneView

COLUMNS = (
    (NETDEV.rx_kb, "rxkB/s"),
    (NETDEV.tx_kb, "txkB/s"),
    (NETDEV.rx_pkt, "rxpk/s"),
    (NETDEV.tx_pkt, "txpk/s"),
    (NETDEV.rx_drop, "rxdrop"),
    (NETDEV.tx_drop, "txdrop"),
    (NETDEV.rx_err, "err"),
    (NETDEV.util, "%util"),
)
TOP = 3


def render_interfaces(view: PaneView, width: int) -> RenderableType:
    """The busiest interfaces (all of them when zoomed) that pass the filter."""
    p = view.palette
    rows = view.rows(NETDEV.name)
    names = sorted(
        (n for n in rows if view.matches(n)),
        key=lambda n: -sum(f.of(rows[n]) or 0.0 for f in (NETDEV.rx_kb, NETDEV.tx_kb)),
    )
    shown = names if width > 110 else names[:TOP]
    head = title(p, "INTERFACES", f"{len(shown)}/{len(rows)} busiest")
    problem = view.collector_problem(NETDEV.name)
    if problem is not None:
        return Group(head, problem)
    rows_out = [[Text(fit(n, 12, "middle")), *(view.cell(f, n) for f, _ in COLUMNS)] for n in shown]
    return Group(head, *grid(p, ["iface", *(lab for _, lab in COLUMNS)], rows_out))


class InterfacesPanel(Panel):
    """Interface throughput, errors and drops."""

    render_view = staticmethod(render_interfaces)
    needs = NETDEV.name
    filters = NETDEV.name
