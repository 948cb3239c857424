"""Where a commit's time goes: the analysis' budget of log file sync as one stacked bar.

Local log write and the remote (SYNC) write run in parallel; the commit waits for the slower, so
the bar is that critical leg (split into network and standby I/O when it is the remote one), the
commits' wait behind a write already in flight (coloured as the part it queues behind), and the
overhead; the local write is marked on the same scale.
"""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.style import Style
from rich.text import Text

from sgmon.fields import ORACLE_WAITS
from sgmon.tui.draw import title
from sgmon.tui.palette import Palette
from sgmon.tui.panels.base import Panel
from sgmon.tui.panels.header import clock
from sgmon.tui.view import PaneView
from sgmon.units import fmt_num

Leg = tuple[str, str, float]
"""(label, colour leg, ms): one segment of the bar."""


def legs(budget: object) -> list[Leg]:
    """(label, colour leg, ms) segments of the bar, in the order drawn."""

    def ms(name: str) -> float:
        return max(0.0, float(getattr(budget, name, 0.0) or 0.0))

    local, remote = ms("local_write_ms"), ms("remote_write_ms")
    if remote >= local:
        net, io = ms("network_ms"), ms("standby_io_ms")
        segs = [("network", "network", net), ("standby io", "standby", io)]
        other = remote - net - io
        if other > 0.005:  # the remote write unsplit (no standby waits to split it) says so
            segs.append(("remote other" if net or io else "remote write", "standby", other))
    else:
        segs = [("local write", "local", local)]
    on = str(getattr(budget, "queue_on", "") or "")
    if on:
        # a remote write not split (no standby waits in the data) has the colour of the
        # unsplit rest of a remote write, "remote other"
        leg = on if on in ("network", "standby", "local") else "standby"
        segs.append((f"queued {'standby io' if on == 'standby' else on}", leg, ms("queue_ms")))
    segs.append(("overhead", "overhead", ms("overhead_ms")))
    return [s for s in segs if s[2] > 0]


def render_budget(view: PaneView, width: int) -> RenderableType:
    """The stacked bar and its legend; a note when there is no analysis or no commits."""
    p = view.palette
    b = view.budget
    if view.stale_since is not None or view.role == "standby":
        b = None  # a silent host's last budget is not now's; a standby commits nothing
    lfs = float(getattr(b, "lfs_ms", 0.0) or 0.0) if b is not None else 0.0
    head = title(p, "COMMIT BUDGET", f"log file sync {fmt_num(lfs)} ms" if lfs else "")
    buys = [Text(" " + t, style=p.muted if i == 0 else "") for i, t in enumerate(view.what_if)]
    if b is None or lfs <= 0:
        return Group(head, Text("  " + _no_bar(view, b), style=p.muted), *buys)
    segs = legs(b)
    total = max(lfs, sum(s[2] for s in segs))
    bar_w = max(10, width - 2)
    top = max(range(len(segs)), key=lambda i: segs[i][2]) if segs else -1
    local = float(getattr(b, "local_write_ms", 0.0) or 0.0)
    mark = local_mark(p, local, total, bar_w)
    legend_lines = wrap(legend(p, segs, top), width)
    # what a change would buy comes first when asked for (w): a pane gives a panel its first
    # lines, and at 100x30 it gave this one only the four of its title and bar
    return Group(head, *buys, bar(p, segs, top, total, bar_w), *legend_lines, mark)


def _no_bar(view: PaneView, budget: object) -> str:
    """Why there is no bar: the host went quiet, is a standby, committed nothing, or the
    analysis has not run."""
    if view.stale_since is not None:
        return f"nothing heard since {clock(view.stale_since)}: no budget of now"
    if view.role == "standby":
        return "measured on the primary"
    return "no commits this interval" if budget is not None else "no analysis yet"


def bar(p: Palette, segs: list[Leg], top: int, total: float, bar_w: int) -> Text:
    """The segments on ``bar_w`` cells to the scale of ``total`` ms, the last taking the
    cells left; the dominant part (``top``) in full blocks, the rest in a lighter shade, so
    the cause stands out."""
    out = Text(" ")
    used = 0
    for i, (_, leg, ms) in enumerate(segs):
        n = bar_w - used if i == len(segs) - 1 else round(ms / total * bar_w)
        out.append(("█" if i == top else "▒") * max(0, n), style=p.leg(leg))
        used += max(0, n)
    return out


def legend(p: Palette, segs: list[Leg], top: int) -> list[Text]:
    """Each segment's label and ms in its colour, the dominant one in bold."""
    items: list[Text] = []
    for i, (label, leg, ms) in enumerate(segs):
        item = Text("■ ", style=p.leg(leg))
        style = p.leg(leg) + Style(bold=True) if i == top else p.muted
        item.append(f"{label} {fmt_num(ms)}", style=style)
        items.append(item)
    return items


def wrap(items: list[Text], width: int) -> list[Text]:
    """Legend items on as many lines as they need, never one cut: a part's number is what the
    reader came for (``overhead 3.`` hid the cause)."""
    lines = [Text(" ")]
    for item in items:
        line = lines[-1]
        if line.cell_len > 1 and line.cell_len + item.cell_len > width:
            line = Text(" ")
            lines.append(line)
        line.append_text(item)
        line.append("  ")
    for line in lines:
        line.rstrip()
    return lines


def local_mark(p: Palette, local: float, total: float, bar_w: int) -> Text:
    """The local write as a tick under the bar at its place on the bar's scale, labelled on the
    side with room (it runs in parallel with the remote write, so it is not a segment)."""
    col = min(bar_w - 1, max(0, round(local / total * bar_w) - 1)) if total > 0 else 0
    label = f"local write {fmt_num(local)} ms"
    line = Text(" " * (1 + col))
    if local <= 0:
        return Text(" " + label, style=p.muted)
    if col + 2 + len(label) <= bar_w:
        line.append("│", style=p.leg("local"))
        line.append(" " + label, style=p.muted)
        return line
    line = Text(" " * max(1, col - len(label)))
    line.append(label + " ", style=p.muted)
    line.append("│", style=p.leg("local"))
    return line


class BudgetPanel(Panel):
    """The commit-time budget bar."""

    render_view = staticmethod(render_budget)
    needs = ORACLE_WAITS.name
