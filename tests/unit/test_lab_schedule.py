"""`sgmon lab` without a lab: its schedule syntax and its one-line refusals (no root needed)."""

from __future__ import annotations

import os

import pytest

from sgmon.cli import main
from sgmon.lab import schedule
from sgmon.sim import SCENARIOS


def test_fault_items_parse_into_steps_and_switch_on_time():
    steps = schedule.parse("loss@20s-60s, rto_min@40s")
    assert steps == [schedule.Step("loss", 20.0, 60.0), schedule.Step("rto_min", 40.0, None)]
    assert schedule.due(steps, 10) == {"loss": False, "rto_min": False}
    assert schedule.due(steps, 45) == {"loss": True, "rto_min": True}
    assert schedule.due(steps, 61) == {"loss": False, "rto_min": True}


def test_scenarios_use_the_simulated_pairs_names():
    assert [s.name for s in schedule.scenario("rto-stall-fixed", 10)] == ["loss", "rto_min"]
    assert [s.name for s in schedule.scenario("async-iops-cap", 10)] == ["iops_async"]
    assert schedule.scenario("healthy", 10) == []
    assert set(schedule.SCENARIOS) <= set(SCENARIOS)


@pytest.mark.parametrize(
    "argv",
    [
        ["--fault", "flood@10s"],
        ["--fault", "loss@30s-10s"],
        ["--scenario", "nope"],
        ["--duration", "5s"],
    ],
)
def test_bad_arguments_are_one_line(capsys, argv):
    assert main(["lab", *argv]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("sgmon:")


def test_without_root_the_lab_says_so_in_one_line(capsys, monkeypatch):
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    assert main(["lab", "--duration", "20s"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        "sgmon: the lab cannot run here: needs root (network namespaces, loop devices, cgroups)"
    ]


def test_list_names_every_fault_and_scenario(capsys):
    assert main(["lab", "--list"]) == 0
    out = capsys.readouterr().out
    for name in (*schedule.SCENARIOS, "loss", "rto_min", "iops", "iops_async", "cpu", "switches"):
        assert name in out
