"""When the lab switches its faults: ``NAME@START[-END]`` items and the named scenarios.

The scenario names are the simulated pair's (``sgmon demo --list``), so a DBA can watch the same
incident simulated and then reproduced on real kernels.
"""

from __future__ import annotations

from dataclasses import dataclass

from sgmon.lab.faults import FAULTS
from sgmon.units import parse_duration


@dataclass(frozen=True, slots=True)
class Step:
    """Fault ``name`` on from ``start`` to ``end`` seconds into the lab (None: to the end)."""

    name: str
    start: float
    end: float | None = None


SCENARIOS: dict[str, str] = {
    "healthy": "",
    "rto-stall": "loss@{onset}",
    "rto-stall-fixed": "loss@{onset},rto_min@{fix}",
    "standby-iops-cap": "iops@{onset}",
    "async-iops-cap": "iops_async@{onset}",
    "log-switch-storm": "switches@{onset}-{end}",
    "primary-cpu-starved": "cpu@{onset}",
}


def parse(text: str) -> list[Step]:
    """``loss@20s-60s,rto_min@40s`` -> steps; raises ValueError with the accepted form."""
    steps = []
    for item in filter(None, (t.strip() for t in text.split(","))):
        name, sep, when = item.partition("@")
        if name not in FAULTS:
            raise ValueError(f"unknown fault {name!r}: use one of {', '.join(FAULTS)}")
        start, _, end = when.partition("-") if sep else ("0", "", "")
        s = parse_duration(start)
        e = parse_duration(end) if end else None
        if e is not None and e <= s:
            raise ValueError(f"{item}: the end must come after the start")
        steps.append(Step(name, s, e))
    return steps


def scenario(name: str, onset: float) -> list[Step]:
    """The steps of a named scenario with its fault starting at ``onset`` seconds."""
    if name not in SCENARIOS:
        raise ValueError(f"unknown scenario {name!r}: use one of {', '.join(SCENARIOS)}")
    return parse(SCENARIOS[name].format(onset=onset, fix=onset * 2, end=onset + 10))


def due(steps: list[Step], elapsed: float) -> dict[str, bool]:
    """Which scheduled faults should be on at ``elapsed`` seconds (faults not scheduled: absent)."""
    want: dict[str, bool] = {}
    for st in steps:
        on = st.start <= elapsed and (st.end is None or elapsed < st.end)
        want[st.name] = want.get(st.name, False) or on
    return want
