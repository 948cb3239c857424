"""One bucket truth: the seeds' histograms read the same from the milli and the micro view.

Seed 000's Table 5 (V$EVENT_HISTOGRAM, 'log file sync') and seed 001's AWR "Wait Event Histogram
Detail" rows are published as cumulative V$ rows of a stand-in database, once as 11.2's milli
view and once as 19c's micro view (bound x 1024 us, the bucket Oracle names "N milliseconds").
The real collector reads them, and the % OF WAITS panel's own render function draws them: each
view must give the seeds' own percentages in the same columns, and the percentiles must name the
column they fall in.
"""

from __future__ import annotations

import pytest
from rich.console import Group

import themes
from collectors.oracle.waits import OracleWaitsCollector
from sgmon import buckets
from sgmon.model import CollectorResult, Frame, Status
from sgmon.oracle.session import Session
from sgmon.sim import SimPair
from sgmon.sim.standin import StandIn
from sgmon.tui.palette import Palette
from sgmon.tui.panels.histogram import frame_shares, render_histogram
from sgmon.tui.view import PaneView

PALETTE = Palette.from_variables("sgmon-dark", themes.load_themes()["sgmon-dark"]["variables"])

# seed 000, Table 5: milliseconds, number of waits, percent of total waits
TABLE5 = [(1, 17610), (2, 43670), (4, 8394), (8, 4072), (16, 4344), (32, 2109), (64, 460), (128, 6)]
TABLE5_PCT = {"<1ms": 21.83, "<2": 54.14, "<4": 10.41, "<8": 5.05, "<16": 5.39, "<32": 2.61}

# seed 001: 'log file sync', 15404 waits, AWR "% of waits" from <32ms to <2s
SEED001_TOTAL = 15404
SEED001_PCT = {32: 94.8, 64: 0.7, 128: 0.5, 256: 3.7, 512: 0.2, 1024: 0.2}


def _as_view(rows_ms: list[tuple[int, int]], view: str) -> dict[str, list[tuple[int, int]]]:
    """Bucket counts keyed by the view's own bound column (ms, or us for the micro view)."""
    if view == "milli":
        return {"milli": rows_ms}
    return {"micro": [(ms * 1024, n) for ms, n in rows_ms]}


def _collect(rows_ms: list[tuple[int, int]], view: str) -> dict:
    """One interval of the real collector over a stand-in of the view's version."""
    db = StandIn(version="11.2.0.4.0" if view == "milli" else "19.0.0.0.0")
    c = OracleWaitsCollector({"session": Session(connect=db.connect)})
    c.open()
    zero = [(b, 0) for b, _ in rows_ms]
    db.publish_event("log file sync", 0, 0.0, **_as_view(zero, view))
    first = c.sample()
    total = sum(n for _, n in rows_ms)
    db.publish_event("log file sync", total, total * 4000.0, **_as_view(rows_ms, view))
    return c.derive(first, c.sample(), 30.0)["log file sync"]


def _table(row: dict) -> dict[str, str]:
    """The % OF WAITS panel's own cells for the event, by column header."""
    f = Frame(
        "p", 0.0, 1, 30.0, {"oracle_waits": CollectorResult(Status.OK, {"log file sync": row})}
    )
    group = render_histogram(PaneView("p", "primary", PALETTE, f), 120)
    assert isinstance(group, Group)
    lines = [getattr(t, "plain", "") for t in group.renderables]
    header = next(ln for ln in lines if ln.startswith("event"))
    body = next(ln for ln in lines if ln.startswith("log file sync"))
    # numbers are right-aligned under their headers: a cell is what lies between the end of the
    # previous header and the end of its own
    out: dict[str, str] = {}
    names = header.split()[1:]
    prev = header.index(names[0]) - 1
    for h in names:
        end = header.index(h, prev) + len(h)
        out[h] = body[prev:end].strip()
        prev = end
    return out


@pytest.mark.parametrize("view", ["milli", "micro"])
def test_table5_reads_as_the_seed_from_either_view(view: str) -> None:
    row = _collect(TABLE5, view)
    cells = _table(row)
    for col, pct in TABLE5_PCT.items():
        assert float(cells[col]) == round(pct, 1), (col, cells)
    assert cells["<256"] == "" and cells["≥256"] == ""
    # "92% ... less than 8ms with the vast majority less than 4ms": p50 <2, p90 <8, p99 <32
    assert (row["p50"], row["p90"], row["p99"], row["max_bucket"]) == (2, 8, 32, 128)


@pytest.mark.parametrize("view", ["milli", "micro"])
def test_seed001_stalls_land_in_the_128_256_column_from_either_view(view: str) -> None:
    rows = [(b, round(SEED001_TOTAL * p / 100)) for b, p in SEED001_PCT.items()]
    row = _collect(rows, view)
    cells = _table(row)
    assert cells["<256"] == "3.7"  # "most outliers (15404/100*3.7 = 570) are in 128-250 ms"
    # AWR's rounded percentages add up to 100.1, so the counts typed back from them may move a
    # tenth; every other column is empty
    for col, pct in {"<32": 94.8, "<64": 0.7, "<128": 0.5, "≥256": 0.4}.items():
        assert abs(float(cells[col]) - pct) <= 0.1, (col, cells)
    assert all(cells[c] == "" for c in ("<1ms", "<2", "<4", "<8", "<16"))
    assert row["p99"] == 256 and buckets.column(row["p99"]) == buckets.HEADERS.index("<256")
    assert buckets.span_of(row["p99"]) == "128-256 ms"


def test_micro_and_milli_bounds_of_one_bucket_share_name_column_and_le() -> None:
    for ms in (1, 2, 4, 128, 256):
        micro = ms * 1.024
        assert buckets.exponent(micro) == buckets.exponent(ms)
        assert buckets.column(micro) == buckets.column(ms)
        assert buckets.nominal(micro) == ms
    assert buckets.name(buckets.exponent(262.144)) == "<256ms"
    assert buckets.name(buckets.exponent(0.512)) == "<512us"
    assert buckets.exact_ms(buckets.exponent(256)) == 262.144  # an le may not undercut its waits
    assert buckets.column(0.512) == 0 and buckets.column(None) == len(buckets.HEADERS) - 1


@pytest.mark.parametrize("scenario", ["healthy", "rto-stall"])
def test_demo_percentiles_fall_in_the_column_the_table_fills(scenario: str) -> None:
    """The WAIT EVENTS p99 and the % OF WAITS row say the same thing in every tick."""
    pair = SimPair(scenario, seed=3, onset=5.0)
    checked = 0
    for _ in range(40):
        for f in pair.step():
            for event, row in f.rows("oracle_waits").items():
                sh = frame_shares(f, event)  # what the % OF WAITS row and the heatmap draw
                if sh is None or row.get("p99") is None:
                    continue
                running, col = 0.0, 0
                for col, share in enumerate(sh):  # noqa: B007 - the column where 99 % is reached
                    running += share
                    if running >= 0.99 - 1e-9:
                        break
                assert buckets.column(row["p99"]) == col, (event, row["p99"], sh)
                checked += 1
    assert checked > 40
