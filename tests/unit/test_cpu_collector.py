"""The cpu collector's arithmetic on edge cases mpstat handles: guest time, ticks going back."""

from __future__ import annotations

import pytest

from collectors.cpu import CpuCollector, cpu_percentages, parse_loadavg, parse_stat

STAT = """cpu  {u} 10 300 5000 {io} 0 20 0 {g} 0
cpu0 {u} 10 300 5000 {io} 0 20 0 {g} 0
intr {intr} 5 6 7
ctxt {ctxt}
btime 1763700000
processes 4242
procs_running {run}
procs_blocked 2
"""


def stat(u=1000, io=100, g=0, intr=50000, ctxt=90000, run=3) -> str:
    return STAT.format(u=u, io=io, g=g, intr=intr, ctxt=ctxt, run=run)


def test_guest_is_taken_out_of_usr_and_the_total() -> None:
    # 100 ticks of user of which 40 were a guest vCPU, 100 idle
    before = [1000, 0, 0, 5000, 0, 0, 0, 0, 400, 0]
    after = [1100, 0, 0, 5100, 0, 0, 0, 0, 440, 0]
    pct = cpu_percentages(before, after)
    assert pct["usr"] == pytest.approx(30.0)
    assert pct["guest"] == pytest.approx(20.0)
    assert pct["idle"] == pytest.approx(50.0)
    assert sum(pct.values()) == pytest.approx(100.0)  # type: ignore[arg-type]


def test_a_counter_stepping_back_counts_as_zero_and_no_ticks_is_unknown() -> None:
    before = [1000, 0, 0, 5000, 300, 0, 0, 0, 0, 0]
    after = [1050, 0, 0, 5050, 290, 0, 0, 0, 0, 0]  # iowait went back (tickless kernels)
    pct = cpu_percentages(before, after)
    assert pct["iowait"] == 0.0 and pct["usr"] == pytest.approx(50.0)
    assert set(cpu_percentages(after, after).values()) == {None}


def test_host_fields_and_first_sample() -> None:
    c = CpuCollector()
    first = parse_stat(stat())
    first["all"].update(parse_loadavg("0.50 0.40 0.30 4/321 999\n"))
    second = parse_stat(stat(u=1100, intr=52000, ctxt=91000, run=1))
    second["all"].update(parse_loadavg("0.60 0.40 0.30 1/322 999\n"))
    primed = c.derive(None, first, 0.0)
    assert primed["all"]["usr"] is None and primed["all"]["cswch"] is None
    assert primed["all"]["runq_sz"] == 2  # procs_running less the sampler itself, as sar -q
    row = c.derive(first, second, 2.0)["all"]
    assert row["cswch"] == 500.0 and row["intr"] == 1000.0
    assert row["runq_sz"] == 0 and row["blocked"] == 2
    assert row["load1"] == 0.6 and row["plist_sz"] == 322
    assert row["usr"] == pytest.approx(100.0)
    assert "load1" not in c.derive(first, second, 2.0)["cpu0"]  # host-wide fields on `all` only


def test_an_offline_cpu_drops_out_and_returns_without_a_rate() -> None:
    c = CpuCollector()
    both = parse_stat(stat())
    only_all = {"all": both["all"]}
    assert set(c.derive(both, only_all, 1.0)) == {"all"}
    back = c.derive(only_all, both, 1.0)
    assert back["cpu0"]["usr"] is None


def test_the_real_proc_stat_parses() -> None:
    c = CpuCollector()
    c.open()
    try:
        rows = c.sample()
    finally:
        c.close()
    assert "all" in rows and "cpu0" in rows
    assert all(len(r["ticks"]) == 10 for r in rows.values())  # type: ignore[arg-type]
    assert isinstance(rows["all"]["cswch"], int) and isinstance(rows["all"]["load1"], float)
