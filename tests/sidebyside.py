"""Run a sysstat tool and one of our collectors over the same interval, for accuracy tests.

The tool is started first; our first sample follows at once and the second one ``seconds`` later,
so both measure the same window up to the tool's start-up (a few ms).
"""

from __future__ import annotations

import json
import subprocess
import time
from typing import Any

from sgmon.collector import Collector
from sgmon.model import Rows


def side_by_side(collector: Collector, cmd: list[str], seconds: float) -> tuple[Rows, str]:
    """Derived rows of ``collector`` over ``seconds`` and the tool's stdout over the same window."""
    collector.open()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        first = collector.sample()
        t0 = time.monotonic()
        time.sleep(seconds)
        second = collector.sample()
        dt = time.monotonic() - t0
        out, err = proc.communicate(timeout=seconds + 15)
        if proc.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)} failed ({proc.returncode}): {err.strip()}")
        return collector.derive(first, second, dt), out
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        collector.close()


def sysstat_json(out: str) -> dict[str, Any]:
    """The first statistics entry of a sysstat ``-o JSON`` report."""
    return json.loads(out)["sysstat"]["hosts"][0]["statistics"][0]


def close_to(ours: float | None, theirs: float, rel: float, abs_: float) -> bool:
    """Whether two readings agree within a relative or an absolute tolerance (the larger)."""
    return ours is not None and abs(ours - theirs) <= max(rel * abs(theirs), abs_)


def parse_sar_average(text: str) -> dict[str, float | str]:
    """The ``Average:`` lines of a sar report (run with LC_ALL=C): column name -> value.

    A line whose tokens are all names is a header; the data line under it may start with a
    label (``sum`` under ``INTR``), kept as a string.
    """
    out: dict[str, float | str] = {}
    header: list[str] = []
    for line in text.splitlines():
        parts = line.split()
        if not parts or parts[0] != "Average:":
            continue
        values = [_number(p) for p in parts[1:]]
        if all(isinstance(v, str) for v in values):
            header = parts[1:]
        else:
            out.update(zip(header, values, strict=True))
    return out


def _number(token: str) -> float | str:
    try:
        return float(token)
    except ValueError:
        return token
