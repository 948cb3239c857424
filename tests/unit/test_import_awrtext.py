"""`sgmon import awr-report`: AWR text reports' wait-event histograms into the archive.

The fixtures in tests/data/awr/ are laid out as awrrpt.sql's TEXT output (their header comments
say where the layout comes from); awrrpt_seed001.txt holds seed 001's own rows.  Expected values
are the reports' numbers: Total Waits x % of the row, never the importer's output read back.
"""

from __future__ import annotations

import argparse
from datetime import UTC, datetime
from pathlib import Path

import pytest
from kits.import_awrtext import LNS, SEED001

from sgmon import buckets
from sgmon.errors import UsageError
from sgmon.importers import awrtext


def _read(*files: Path, tz: str | None = None, host: str = "") -> awrtext.Imported:
    return awrtext.read(argparse.Namespace(files=list(files), host=host, role="primary", tz=tz))


def test_11g_report_one_frame_with_the_detail_buckets_and_wait_totals():
    imp = _read(LNS, tz="+02:00")
    assert not imp.notes and list(imp.frames) == ["prim1"]  # the report's Host Name
    (f,) = imp.frames["prim1"]
    end = datetime(2023, 6, 6, 20, 45, 1, tzinfo=UTC).timestamp()  # 22:45:01 at UTC+2
    assert f.time == end and f.interval == 900.0 == imp.interval
    rows = f.collectors["oracle_waits"].rows
    # commit-path events only; the name cut to 26 characters is the live collector's again
    assert set(rows) == {
        "log file sync",
        "log file parallel write",
        "LNS wait on SENDREQ",
        "LGWR-LNS wait on channel",
        "log file switch (checkpoint incomplete)",
    }
    lfs = rows["log file sync"]
    n = 61_233  # Foreground Wait Events: exact, where the histogram says 61.2K
    assert lfs["waits"] == pytest.approx(n / 900)
    assert lfs["time_waited"] == pytest.approx(3674 * 1000 / 900, abs=0.001)
    assert lfs["avg"] == pytest.approx(3674 * 1000 / n, abs=1e-4)
    hist = dict(lfs["hist"])
    # <1ms .. <32ms from the main section, 32 ms - 2 s from the 64 ms Detail, 2 s - 4 s from
    # the 4 s Detail: each % x Total Waits
    pcts = (2.1, 8.4, 10.2, 9.8, 6.5, 7.0, 9.1, 20.3, 21.0, 4.6, 0.6, 0.3, 0.1)
    expected = {float(2**k): p for k, p in enumerate(pcts)}  # <1ms .. <4s
    for bound, pct in expected.items():
        assert hist[bound] == round(n * pct / 100), bound
    assert sum(hist.values()) == pytest.approx(n, abs=5)
    assert (lfs["p50"], lfs["p90"], lfs["p99"], lfs["max_bucket"]) == (64.0, 256.0, 512.0, 4096.0)
    lpw = dict(rows["log file parallel write"]["hist"])
    assert lpw[1.0] == round(48_120 * 0.61) and lpw[64.0] == round(48_120 * 0.002)
    sw = rows["log file switch (checkpoint incomplete)"]
    assert sw["waits"] * 900 == 12 and sw["max_bucket"] == 4096.0


def test_seed001_rows_give_the_seeds_percentages():
    """Seed 001: 15,404 log file syncs, 94.8 % under 32 ms, 3.7 % in 128-256 ms; SYNC Remote
    Write 99.1 % under 32 ms and 0.8 % in 128-256 ms, averaging 4.34 ms."""
    imp = _read(SEED001, host="node1")
    assert len(imp.notes) == 1 and "--tz" in imp.notes[0]
    (f,) = imp.frames["node1"]
    assert f.interval == 30.0
    rows = f.collectors["oracle_waits"].rows
    lfs = rows["log file sync"]
    assert lfs["waits"] * 30 == pytest.approx(15_404)
    shares = buckets.shares(lfs["hist"])
    assert shares is not None
    pct = dict(zip(buckets.HEADERS, (round(100 * x, 1) for x in shares), strict=True))
    # the report gives only "under 32 ms"; its rounded row adds up to 100.1 %
    assert pct["<32"] == pytest.approx(94.8, abs=0.1) and sum(shares[:5]) == 0
    assert (pct["<64"], pct["<128"], pct["<256"], pct["≥256"]) == (0.7, 0.5, 3.7, 0.4)
    assert lfs["p99"] == 256.0  # 96.0 % under 128 ms: the 128-256 ms outliers of the seed
    srw = rows["SYNC Remote Write"]
    srw_hist = dict(srw["hist"])
    assert srw_hist[32.0] == round(6335 * 0.991) and srw_hist[256.0] == round(6335 * 0.008)
    assert srw["avg"] == pytest.approx(28_000 / 6335, abs=1e-3)  # the report's 4.34 ms avg
    assert rows["log file parallel write"]["hist"] is None  # no histogram row for it


def test_unknown_histogram_heading_is_a_usage_error_not_a_guess():
    text = LNS.read_text().replace("<16ms <32ms  <=1s", "<16ms <32ms  <=9q", 1)
    with pytest.raises(UsageError, match="unknown histogram column"):
        awrtext.parse(text.splitlines())


def _header_only(tmp_path: Path, name: str = "awrrpt_empty.txt") -> Path:
    """seed001's report cut after the Foreground Wait Events heading: the header and the
    section's column heads, no row (a report of an idle interval, or one cut by a pager)."""
    text = SEED001.read_text()
    head = text[: text.index("log file sync   ")]
    path = tmp_path / name
    path.write_text(head)
    return path


def test_header_without_rows_is_one_line_not_an_empty_archive(tmp_path: Path):
    """The old importer noted 'nothing imported' and returned an empty import (exit 0)."""
    empty = _header_only(tmp_path)
    with pytest.raises(UsageError, match="no wait event section of the commit path") as e:
        _read(empty)
    assert "\n" not in str(e.value)


def test_header_without_rows_beside_a_full_report_is_a_note(tmp_path: Path):
    empty = _header_only(tmp_path)
    imp = _read(empty, SEED001, tz="+00:00")
    assert len(imp.frames["node1"]) == 1
    assert [n for n in imp.notes if "nothing imported" in n] == [
        f"{empty}: no wait event section of the commit path: nothing imported"
    ]


def test_a_fifo_or_a_huge_file_is_one_line_never_a_hang(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A FIFO named as a report used to block the import until a writer came; a file past the
    size of any report is refused rather than read into memory."""
    import os

    fifo = tmp_path / "awrrpt.lst"
    os.mkfifo(fifo)
    with pytest.raises(UsageError, match="is a FIFO, not a regular file") as e:
        _read(fifo)
    assert "\n" not in str(e.value)
    monkeypatch.setattr(awrtext, "TEXT_MAX", SEED001.stat().st_size - 1)
    with pytest.raises(UsageError, match=f"larger than {SEED001.stat().st_size - 1} bytes"):
        _read(SEED001)
