"""`sgmon demo` and `sgmon` (dashboard) from the command line, short of opening the screen."""

from __future__ import annotations

import subprocess
import sys

from sgmon.sim import SCENARIOS


def sgmon(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sgmon", *args],
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )


def test_demo_list_names_every_scenario_without_textual() -> None:
    code = (
        "import sys; from sgmon.cli import main; rc = main(['demo', '--list']); "
        "print('textual loaded' if 'textual' in sys.modules else 'no textual'); sys.exit(rc)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0
    lines = out.stdout.splitlines()
    assert lines[-1] == "no textual"
    assert [line.split()[0] for line in lines[:-1]] == list(SCENARIOS)
    assert next(line for line in lines if line.startswith("rto-stall ")).endswith("(default)")


def test_demo_rejects_an_unknown_scenario_in_one_line() -> None:
    out = sgmon("demo", "--scenario", "meteor-strike")
    assert out.returncode == 2
    assert out.stderr.startswith("sgmon: unknown scenario 'meteor-strike'; try: healthy")
    assert len(out.stderr.strip().splitlines()) == 1


def test_dashboard_without_a_terminal_says_what_to_use() -> None:
    for args in (("demo",), ()):
        out = sgmon(*args)
        assert out.returncode == 2
        assert out.stderr.strip() == (
            "sgmon: the dashboard needs a terminal; for headless use try `sgmon record` or "
            "`sgmon status`"
        )
