"""The archive of a recording of hundreds of hosts: meta.json lists them all, and is not
rewritten once per host (it grows with the hosts, 9 MB at 300: rewriting it at each host's
first frame held the recorder's outputs minutes behind)."""

from __future__ import annotations

import csv
import json
import time
from types import SimpleNamespace

from sgmon import registry
from sgmon.model import CollectorResult, Frame, Status
from sgmon.sinks import csvarchive
from sgmon.sinks.csvarchive import ArchiveWriter

HOSTS = 300
CPU = registry.builtin("cpu").fields


def frame(host: str, t: float, role: str = "") -> Frame:
    row = {f.name: 1.0 for f in CPU if f.kind.value != "histogram"}
    rows = {"all": row}
    return Frame(host, t, 1, 1.0, {"cpu": CollectorResult(Status.OK, rows)}, role=role)


def test_hosts_coming_up_rewrite_meta_a_few_times_not_once_each(tmp_path, monkeypatch) -> None:
    writes: list[int] = []
    real = csvarchive.write_meta

    def counted(at, meta) -> None:  # type: ignore[no-untyped-def]
        writes.append(len(meta["hosts"]))
        real(at, meta)

    monkeypatch.setattr(csvarchive, "write_meta", counted)
    names = [f"h{i:03d}" for i in range(HOSTS)]
    writer = ArchiveWriter(
        tmp_path, lambda h: {"cpu": CPU}, 1.0, hosts=dict.fromkeys(names, "standby")
    )
    t = 1_800_000_000.0
    for tick in range(2):
        for i, name in enumerate(names):
            writer(frame(name, t + tick, role="primary" if i == 7 else ""))
    writer.close()
    # one at the start, one when the first host is heard of (listing every host that answered),
    # one at the stop; the rows of each host were written after the write that lists it
    assert len(writes) <= 3, writes
    meta = json.loads((tmp_path / "meta.json").read_text())
    assert sorted(meta["hosts"]) == names
    assert meta["hosts"]["h007"]["role"] == "primary"  # its own first frame's role wins
    assert meta["hosts"]["h008"]["role"] == "standby"
    for name in names:
        [table] = (tmp_path / name).glob("cpu_*.csv")
        with table.open() as f:
            assert len(list(csv.DictReader(f))) == 2


def test_the_state_file_of_300_hosts_is_not_rewritten_at_each_frame(tmp_path, monkeypatch) -> None:
    """It holds every host: rewritten after each of 300 hosts' frames, a tick cost 300 files
    of 300 lines.  A host or two still get every frame published."""
    from sgmon.grading import Grader
    from sgmon.sinks import statefile
    from sgmon.sinks.statefile import StatePublisher
    from sgmon.verdicts import Judgement

    clock = [0.0]  # the dispatcher's time: frames 10 us apart back to back, 10 ms as they come
    monkeypatch.setattr(
        statefile, "time", SimpleNamespace(monotonic=lambda: clock[0], time=time.time)
    )
    written: list[int] = []

    def publisher() -> StatePublisher:
        p = StatePublisher(tmp_path / "run")
        real = p.publish
        monkeypatch.setattr(p, "publish", lambda: (written.append(1), real())[1])
        return p

    many = publisher()
    for tick in range(3):
        for i in range(HOSTS):
            f = frame(f"h{i:03d}", 1_800_000_000.0 + tick)
            many(f, Judgement(f, Grader()))
            clock[0] += 1e-5
    many.close()
    assert 0 < len(written) <= 3  # 900 frames in 9 ms: the first few, then one per 0.3 s
    written.clear()
    two = publisher()
    for tick in range(3):
        for host in ("primary", "standby"):
            f = frame(host, 1_800_000_000.0 + tick)
            two(f, Judgement(f, Grader()))
            clock[0] += 0.01
    two.close()
    assert len(written) == 6
