"""Settings never delete the user's files: ``--keep`` below one rotation is refused, and
retention deletes only the tables this archive recorded, in its own host directories."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

from sgmon import registry
from sgmon.hosts.local import LocalSource
from sgmon.sinks.csvarchive import ArchiveWriter


def _record(root: Path, name: str = "hostA", keep: float | None = 3600) -> None:
    src = LocalSource([registry.load("cpu")()], 0.2, name=name, role="primary", duration=0.5)
    w = ArchiveWriter(root, src.schema, src.interval, keep=keep)
    src.run(w, threading.Event())
    src.close()
    w.close()


def _old(p: Path, text: str = "the user's own\n") -> Path:
    p.write_text(text)
    os.utime(p, (time.time() - 86400, time.time() - 86400))
    return p


def test_keep_below_one_rotation_is_refused_before_anything_is_touched(tmp_path: Path) -> None:
    arch = tmp_path / "arch"
    _record(arch, keep=None)
    before = sorted(p.name for p in arch.rglob("*"))
    for keep, rotate in (("0", "1h"), ("30m", "1h"), ("-1h", "1h"), ("inf", "1h"), ("1d", "0")):
        r = subprocess.run(
            [sys.executable, "-m", "sgmon", "record", "--simulate", "healthy", "--dir", str(arch),
             f"--keep={keep}", f"--rotate={rotate}", "--duration", "1s"],
            capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert r.returncode == 2, (keep, r.stderr)
        assert r.stderr.count("\n") == 1 and r.stderr.startswith("sgmon: "), r.stderr
    assert sorted(p.name for p in arch.rglob("*")) == before


def test_retention_deletes_only_the_tables_it_recorded(tmp_path: Path) -> None:
    """Old files named like tables but of no recorded collector, a symlink to a file elsewhere,
    and a meta.json pointing a host at the parent directory are all left alone."""
    arch = tmp_path / "arch"
    _record(arch)
    hdir = arch / "hostA"
    recorded = _old(hdir / "cpu_20200101_00.csv", "time,host\n")
    not_ours = _old(hdir / "budget_20200101_00.csv")  # a collector this archive never had
    outside = _old(tmp_path / "cpu_20200101_01.csv")
    (hdir / "cpu_20200101_02.csv").symlink_to(outside)
    meta = json.loads((arch / "meta.json").read_text())
    meta["hosts"][".."] = {"dir": "..", "role": "", "collectors": {"cpu": {}}}
    (arch / "meta.json").write_text(json.dumps(meta))
    _record(arch)
    assert not recorded.exists()
    assert not_ours.read_text() == "the user's own\n"
    assert outside.read_text() == "the user's own\n"
    assert (hdir / "cpu_20200101_02.csv").is_symlink()


def test_a_host_named_dotdot_never_reaches_the_parent(tmp_path: Path) -> None:
    arch = tmp_path / "arch"
    _record(arch)
    mine = _old(tmp_path / "cpu_20200101_00.csv")
    _record(arch, name="..")
    assert mine.read_text() == "the user's own\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["arch", mine.name]
