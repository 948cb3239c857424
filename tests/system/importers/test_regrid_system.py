"""Hosts sampled at different steps on one grid: the combination rules, and the analysis on an
archive whose hosts come at OSWatcher's 30 s and a coarser 60 s, as imports do."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import pytest

from sgmon.hosts.replay import ReplaySource
from sgmon.importers import Imported
from sgmon.importers.write import write
from sgmon.model import Frame
from sgmon.regrid import regrid


@pytest.fixture(scope="module")
def coarse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 1 s recording of seed 003's capped standby, stored again as two imports would store
    it: the standby at 30 s (OSWatcher's step), the primary at 60 s, into one archive.  The cap
    starts after 5 minutes: with the default 30 s onset, a 60 s grid held at most one cell of
    baseline, so whether the fault lined up depended on where the wall clock's start fell in
    its minute (seen: a start at :21 named the primary's max_write instead)."""
    root = tmp_path_factory.mktemp("regrid")
    rec = root / "rec"
    subprocess.run(
        [
            *(sys.executable, "-m", "sgmon", "record", "--simulate", "standby-iops-cap"),
            *("--speed", "1000", "--duration", "600", "--onset", "300", "--dir", str(rec)),
        ],
        check=True,
        capture_output=True,
        timeout=300,
    )
    src = ReplaySource(rec, speed=0)
    out = root / "coarse"
    for host, step in (("standby", 30.0), ("primary", 60.0)):
        imp = Imported(interval=step)
        imp.schema[host] = src.schema(host)
        imp.frames[host] = regrid(src.frames(host), src.schema(host), step)
        write(out, imp)
    return out


def test_an_archive_of_mixed_steps_replays_on_the_coarsest(coarse: Path) -> None:
    src = ReplaySource(coarse, speed=0)
    steps = {h.name: {f.interval for f in src.frames(h.name)} for h in src.hosts}
    assert src.regridded == 60.0 and steps == {"primary": {60.0}, "standby": {60.0}}
    times = [f.time for f in src.frames("standby")]
    seconds = [f.time for f in ReplaySource(coarse.parent / "rec", speed=0).frames("standby")]
    assert all(t % 60.0 == 0 for t in times)
    assert len(times) == len({math.ceil(t / 60.0) for t in seconds}) >= 5


def test_check_names_the_capped_standby_at_the_archive_resolution(coarse: Path) -> None:
    r = subprocess.run(
        [sys.executable, "-m", "sgmon", "check", "--from", str(coarse)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    top = r.stdout.splitlines()[1]
    assert top.startswith("CRIT standby:") and "sdb" in top, r.stdout
    assert "1-minute samples" in r.stdout, r.stdout
    assert "judged on the coarsest, 1-minute samples" in r.stderr
    # seed 003's second clue, from the primary's statistics at the same resolution
    finding = r.stdout.split("\nWARN")[0].split("\nINFO")[0]
    assert "redo size for lost write detection" in finding and "sdb await moved with it" in finding


def test_seed_003_from_its_own_kind_of_data(tmp_path: Path) -> None:
    """Seed 003's author had the primary's AWR and the standby's sar. The simulated seed 003
    pair gives the same: the primary's AWR snapshotted every 2 simulated minutes and imported by
    `sgmon import awr`'s own code, and the standby's OS rows (the figures sar keeps) at sar's
    1-minute step, in one archive. `check --from` regrids them onto 2 minutes and names the
    standby's capped device, lined up with the primary's commit path, with the lost-write clue
    and the resolution it rests on. (A correlation needs 8 points: 24 simulated minutes give
    12; at AWR's 15 minutes that is 3 hours, where seed 003's author had days.)"""
    from sgmon.importers.awr import Window, import_awr
    from sgmon.oracle.session import Session
    from sgmon.sim import SimPair
    from sgmon.sim.awr import Awr

    start = 1_790_000_000.0
    pair = SimPair("standby-iops-cap", seed=3, interval=60.0, start=start, onset=600.0)
    standby: list[Frame] = []
    try:
        awr = Awr(pair.dbs["primary"])
        awr.snapshot(pair.now())
        for k in range(24):
            standby += [f for f in pair.step() if f.host == "standby"]
            if (k + 1) % 2 == 0:
                awr.snapshot(pair.now())
        session = Session(connect=pair.dbs["primary"].connect)
        primary = import_awr(session, Window(start, pair.now(), host="primary", role="primary"))
        sar = ("cpu", "paging", "disk", "netdev")
        schema = {c: f for c, f in pair.schema("standby").items() if c in sar}
    finally:
        pair.close()
    write(tmp_path, primary)
    frames = [
        Frame(f.host, f.time, f.seq, f.interval, {c: f.collectors[c] for c in sar}, (), f.role)
        for f in standby
    ]
    os_history = Imported(interval=60.0)
    os_history.schema["standby"] = schema
    os_history.frames["standby"] = frames
    write(tmp_path, os_history)
    r = subprocess.run(
        [sys.executable, "-m", "sgmon", "check", "--from", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "judged on the coarsest, 2-minute samples" in r.stderr, r.stderr
    top, evidence = r.stdout.splitlines()[1], r.stdout.split("\nWARN")[0].split("\nINFO")[0]
    assert top.startswith("CRIT standby:") and "<- standby disk sdb await" in top, r.stdout
    assert "lines up with" in evidence and "2-minute samples" in evidence, r.stdout
    assert "redo size for lost write detection" in evidence, r.stdout
    # the standby's RFS waits are not in this data: the queue is behind the remote write, not
    # put on the network for want of a standby figure
    assert "queued behind remote write" in r.stdout and "behind network" not in r.stdout
