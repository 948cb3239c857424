"""The panes' order along the commit path, and the strip of the hosts that get no pane.

Seed 003's configuration has four hosts (a SYNC standby, an ASYNC one, one cascaded from the SYNC
one) and a terminal has room for one to three panes.  The panes follow the commit path from the
left (``order``: the primary instance(s), then the SYNC standbys and far sync instances in
destination order), and every host left without a pane is one entry of the strip under them:
where it stands (``place``), its transport/apply lag, the primary's destination for it, and its
worst open finding, so no watched host is out of sight.

Cheap per redraw: an entry reads a few cells of the host's frame at the cursor, the primary's
destination rows and the findings already at hand; the widget is repainted only when its text
changed, and laid out again only when its number of lines did.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from rich.text import Text
from textual.widgets import Static

from sgmon.fields import ORACLE_DG
from sgmon.grading import worst
from sgmon.hosts import HostInfo
from sgmon.topology import Topology, is_sync, thread_lags
from sgmon.tui.fit import fit_words
from sgmon.tui.palette import Palette
from sgmon.tui.panels.dataguard import DB, lag_value, stale_datum
from sgmon.tui.roles import FORMER_PRIMARY, standing
from sgmon.tui.view import PaneView
from sgmon.units import fmt_num

MOST_LINES = 3
"""The strip's height at most; hosts beyond it are counted on its last line."""
GAP = " │ "
"""Between two entries on one line."""
DOT = " · "
"""Between the parts of one entry."""
LAG_FIELDS = (
    ORACLE_DG.transport_lag,
    ORACLE_DG.apply_lag,
    ORACLE_DG.lag_unknown,
    ORACLE_DG.datum_age,
)
"""The database row's lags: graded into the entry's colour, the first three shown when any is
known."""
DEST_FIELDS = (ORACLE_DG.status, ORACLE_DG.error, ORACLE_DG.gap_status)
"""The primary's destination fields graded into the entry's colour."""

Entry = tuple[Text, tuple[str, str] | None]
"""One host's entry: its line, and its worst open finding as (severity, title)."""


def order(hosts: Sequence[HostInfo], topo: Topology | None) -> list[str]:
    """Host names along the commit path, as the panes take them from the left.

    The primary instance(s) first (the topology's in config order, then any other host whose
    role is primary, such as a failover's dead old primary), then the standbys on the commit
    path, then the lag risks (ASYNC destinations), the cascaded standbys and any other host;
    within each, in the order of the primary's destinations, then of the config.  Without a
    topology (no analysis, or not yet run): the primaries, then the others in config order.
    """
    names = [h.name for h in hosts]
    first = [h.name for h in hosts if h.role == "primary"]
    if topo is None:
        return first + [n for n in names if n not in first]
    lead = [n for n in names if n in topo.primaries]  # the databases' own primary instances
    first = lead + [n for n in first if n not in lead]  # then a dead host that was primary
    dest: dict[str, int] = {}
    for i, d in enumerate(topo.dests):
        for h in d.hosts:
            dest.setdefault(h, i)

    def rank(name: str) -> tuple[int, int, int]:
        if name in first:
            return 0, first.index(name), 0
        if topo.places.get(name) == "commit path":
            group = 1
        elif name in dest:
            group = 2
        else:
            group = 3 if topo.cascaded(name) else 4
        return group, dest.get(name, len(topo.dests)), names.index(name)

    return sorted(names, key=rank)


def place(host: HostInfo, topo: Topology | None) -> str:
    """Where a host stands, in two words at most: ``primary``, ``SYNC`` (on the commit path),
    ``far sync``, ``ASYNC lag risk``, ``cascaded``; ``standby`` while the destinations are not
    mapped to watched hosts (the analysis then takes every standby to be on the commit path).
    A host fed by a watched standby's or far sync instance's destination says which:
    ``cascaded from B (dest_2 ASYNC)``, ``behind far sync fs1 (dest_3 ASYNC)``."""
    if standing(host.name, host.role, topo) == FORMER_PRIMARY:
        return FORMER_PRIMARY
    if host.role == "primary" or (topo is not None and host.name == topo.primary):
        return "primary"
    if topo is None or host.name not in topo.standbys:
        return host.role or "host"
    return _standby_place(host.name, topo)


def _standby_place(name: str, topo: Topology) -> str:
    """Where one of the topology's standbys stands: on the commit path, cascaded, or a lag
    risk (with its destination's mode when that is not SYNC)."""
    if topo.places.get(name, "commit path") == "commit path":
        far = name in topo.far_sync
        return "far sync" if far else "SYNC" if topo.mapped else "standby"
    if topo.cascaded(name):
        return topo.upstream(name) or "cascaded"
    mode = next((d.mode for d in topo.dests if name in d.hosts), "")
    return f"{mode} lag risk" if mode and not is_sync(mode) else "lag risk"


def entry(
    view: PaneView,
    where: str,
    primary: PaneView | None,
    dests: Sequence[str],
    finding: Any,
    marked: bool = False,
) -> Entry:
    """One host's entry: its name (in its worst severity), place, lag and destination status,
    and its worst open finding as (severity, title), cut to the room left where it is laid out.

    ``primary`` is the host at the cursor whose ``dests`` rows ship redo to this host (the
    primary, or the standby it is cascaded from); ``marked`` when the finding picked in the
    findings list is about this host.  A RAC standby's threads follow its lag when they differ
    (``lag t1 14 s t2 0 s``: which thread the one transport lag is).
    """
    p = view.palette
    grades = [view.grade(f, DB) for f in LAG_FIELDS]
    parts = [Text(where, style=p.muted)] if where != view.host else []
    parts += lag_parts(view)
    if primary is not None:
        grades += [primary.grade(f, inst) for inst in dests for f in DEST_FIELDS]
        parts += [dest_part(primary, inst, p) for inst in dests]
    sev = worst([*grades, finding.severity if finding is not None else None]) or "ok"
    head = Text(view.host, style=p.title if sev == "ok" else p.title + p.sev(sev))
    if marked:
        head.stylize(p.highlight)
    for i, part in enumerate(parts):
        head.append(DOT if i else "  ", style=p.muted)
        head.append_text(part)
    return head, (finding.severity, finding.title) if finding is not None else None


def lag_parts(view: PaneView) -> list[Text]:
    """The host's transport/apply lag when it has one, then its threads' lags when they
    differ."""
    p = view.palette
    parts = []
    if any(view.value(f, DB) is not None for f in LAG_FIELDS[:3]):
        lag = Text("lag ", style=p.muted)
        lag.append_text(lag_value(view))
        lag.append("/", style=p.muted)
        lag.append_text(view.cell(ORACLE_DG.apply_lag, DB))
        lag.append(" s", style=p.muted)
        parts.append(lag + stale_datum(view))
    split = thread_lags(view.frame)
    if split:
        parts.append(
            Text("lag " + " ".join(f"t{t} {fmt_num(v)} s" for t, v in split.items()), p.muted)
        )
    return parts


def dest_part(primary: PaneView, inst: str, p: Palette) -> Text:
    """The status of the destination ``inst`` of ``primary`` (its gap, when there is one)."""
    text = Text(f"{inst} ", style=p.muted)
    text.append_text(primary.cell(ORACLE_DG.status, inst))
    gap = primary.value(ORACLE_DG.gap_status, inst)
    if gap and gap != "NO GAP":
        text.append(" ")
        text.append_text(primary.cell(ORACLE_DG.gap_status, inst))
    return text


def host_entries(
    names: Sequence[str],
    hosts: Mapping[str, HostInfo],
    topo: Topology | None,
    findings: Sequence[Any],
    chosen: str | None,
    glance: Callable[[HostInfo], PaneView],
) -> list[Entry]:
    """The entries of the hosts ``names`` (``hosts`` by name), at the instant ``glance`` shows
    a host at; ``chosen``: the key of the finding picked in the findings list."""
    primary = hosts.get(topo.primary or "") if topo is not None else None
    seen = glance(primary) if primary else None
    marked = next((f.host for f in findings if f.key == chosen), None)
    out = []
    for name in names:
        host = hosts[name]
        gravest = next((f for f in findings if f.host == name and f.active), None)
        sender, dests = shipper(name, hosts, topo)
        src = glance(sender) if sender else seen
        out.append(entry(glance(host), place(host, topo), src, dests, gravest, name == marked))
    return out


def shipper(
    name: str, hosts: Mapping[str, HostInfo], topo: Topology | None
) -> tuple[HostInfo | None, list[str]]:
    """The watched host other than the primary whose destination ships redo to ``name`` (a
    cascading standby, a far sync instance; None: the primary), and the destinations that do."""
    dests = [d.inst for d in topo.dests if name in d.hosts] if topo is not None else []
    feed = topo.feeder(name) if topo is not None and not dests else None
    sender = hosts.get(feed.source) if feed is not None else None
    if feed is None or sender is None:
        return None, dests
    return sender, [feed.inst]


def _note(palette: Palette, note: tuple[str, str] | None, width: int) -> Text:
    """`` WARN title`` in at most ``width`` cells (cut after a whole word), or nothing."""
    if note is None or width < 8:
        return Text()
    sev, title = note
    out = Text(DOT, style=palette.muted)
    out.append(f"{sev.upper()} ", style=palette.sev(sev))
    out.append(fit_words(title, width - out.cell_len))
    return out


def render_strip(
    palette: Palette,
    entries: Sequence[Entry],
    width: int,
    most: int = MOST_LINES,
) -> list[Text]:
    """The entries packed into lines of ``width``: an entry that fits after the previous one
    goes on its line, else it starts a line, its finding cut to what is left.  Past ``most``
    lines, the last one says how many hosts are not listed and which key shows them."""
    lines: list[Text] = []
    counts: list[int] = []
    for head, note in entries:
        whole = head + _note(palette, note, 10**6)
        if lines and lines[-1].cell_len + len(GAP) + whole.cell_len <= width:
            lines[-1].append(GAP, style=palette.muted)
            lines[-1].append_text(whole)
            counts[-1] += 1
            continue
        line = head.copy()
        line.truncate(width, overflow="ellipsis")
        lines.append(line + _note(palette, note, width - line.cell_len))
        counts.append(1)
    if len(lines) > most:
        more = Text(f"  +{sum(counts[most:])} more (s)", style=palette.muted)
        lines = lines[:most]
        lines[-1].truncate(max(0, width - more.cell_len), overflow="ellipsis")
        lines[-1].append_text(more)
    return lines


class HostStrip(Static):
    """The hosts without a pane, one entry each (hidden while every host has a pane)."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, classes="-empty")
        self.lines: list[Text] = []
        """The lines shown (none: hidden)."""

    def show(self, lines: list[Text]) -> None:
        """Show these lines; repaint only when they changed, lay out only when their number did."""
        if lines == self.lines:
            return
        relayout = len(lines) != len(self.lines)
        self.lines = lines
        self.set_class(not lines, "-empty")
        self.update(Text("\n").join(lines), layout=relayout)
