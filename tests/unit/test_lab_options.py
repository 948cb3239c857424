"""`sgmon lab` reproduces an incident with the user's own numbers (--iops, --loss-rate), and
gives each lab host a CPU of its own where the machine has them, saying so where not.

In-process: the options and the CPU plan are worked out before any namespace is made, so
no root is needed here (tests/system/lab/ runs the lab itself)."""

from __future__ import annotations

import argparse

import pytest

from sgmon import cli
from sgmon.commands import lab
from sgmon.lab.run import assign_cpus


def _args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    lab.add_arguments(parser)
    return parser.parse_args(list(argv))


def test_iops_and_loss_rate_reach_the_faults() -> None:
    opts = lab.options(_args("--iops", "650", "--loss-rate", "2"), 60.0, 1.0, False)
    assert (opts.iops, opts.loss_permille) == (650, 20)
    default = lab.options(_args(), 60.0, 1.0, False)
    assert (default.iops, default.loss_permille) == (300, 5)


@pytest.mark.parametrize(
    ("argv", "words"),
    [(["--iops", "0"], "--iops"), (["--loss-rate", "0"], "--loss-rate"),
     (["--loss-rate", "150"], "--loss-rate")],
)  # fmt: skip
def test_bad_strength_is_one_line(
    argv: list[str], words: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["lab", "--duration", "30s", *argv]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"sgmon: {words}"), err


def test_each_host_its_own_cpu_where_there_are_enough() -> None:
    assert assign_cpus([0, 1, 2, 3], async_standby=True) == (1, 0, 2, "")
    assert assign_cpus([0, 1], async_standby=False) == (1, 0, 0, "")
    primary, standby, other, note = assign_cpus([0, 1], async_standby=True)
    assert (primary, standby, other) == (1, 0, 0)
    assert "2 CPU(s) here for 3 lab hosts" in note and "ASYNC standby shares" in note
    primary, standby, _, note = assign_cpus([3], async_standby=False)
    assert primary == standby == 3 and "share" in note
