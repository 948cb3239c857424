"""`sgmon replay DIR`: a recording in the dashboard, summed up (--summary), or one tick (--at)."""

from __future__ import annotations

import argparse
import sys
from datetime import UTC, datetime

from sgmon.errors import UsageError
from sgmon.headless import instant
from sgmon.units import fmt_utc

TYPE_CHECKING = False
if TYPE_CHECKING:
    from sgmon.hosts.replay import ReplaySource
    from sgmon.model import Frame


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Archive directory and what to show."""
    parser.add_argument("dir", help="an archive written by sgmon record --dir")
    parser.add_argument(
        "--summary", action="store_true", help="one row per finding and outlier episode"
    )
    parser.add_argument(
        "--fields", action="store_true", help="min/median/p99/max of every field, per host"
    )
    parser.add_argument("--at", metavar="TIME", help="print the tick at TIME (ISO or HH:MM:SS)")
    parser.add_argument(
        "--from",
        dest="start",
        metavar="TIME",
        help="start playback at TIME (10:31:02 UTC, ISO, or +5m from the first tick); the ticks "
        "before it load at once so the history and the analysis have them",
    )
    parser.add_argument("--speed", type=float, default=1.0, help="playback speed (dashboard)")
    parser.add_argument(
        "--config", metavar="F", help="sgmon.toml whose [thresholds] and hosts judge the recording"
    )


def run(args: argparse.Namespace) -> int:
    """Load the archive and show it."""
    from sgmon.config import load_config

    config = load_config(args.config)
    src, frames = _load(args)
    if args.at:
        print_at(src, frames, args.at)
    elif args.summary or args.fields:
        if args.summary:
            print_summary(src, frames, config, src.start)
        if args.fields:
            print_fields(src, frames)
    else:
        try:
            from sgmon.tui.live import run_dashboard
        except ImportError as e:
            print(f"sgmon: dashboard not available ({e}); showing --summary", file=sys.stderr)
            print_summary(src, frames, config, src.start)
        else:
            return run_dashboard(sources=[src], config=config, title=f"replay {args.dir}")
    return 0


def _load(args: argparse.Namespace) -> tuple[ReplaySource, dict[str, list[Frame]]]:
    """The archive's source, started where ``--from`` says, and every host's frames; what was
    read around goes to stderr."""
    from sgmon.errors import ArchiveError
    from sgmon.hosts.replay import ReplaySource

    try:
        src = ReplaySource(args.dir, speed=args.speed)
        frames = {h.name: src.frames(h.name) for h in src.hosts}
    except ArchiveError as e:
        raise UsageError(str(e)) from None
    for line in src.problems():  # what was read around, and where
        print(line, file=sys.stderr)
    if not any(frames.values()):
        raise UsageError(f"{args.dir} holds no recorded ticks")
    first = min(fl[0].time for fl in frames.values() if fl)
    last = max(fl[-1].time for fl in frames.values() if fl)
    if args.start:
        src.start = instant("--from", args.start, first)
        if src.start > last:
            raise UsageError(
                f"--from {args.start}: after the recording's last tick ({fmt_utc(last)} UTC)"
            )
    return src, frames


def _hms(t: float) -> str:
    return datetime.fromtimestamp(t, UTC).strftime("%H:%M:%S")


def _quantile(sorted_values: list[float], q: float) -> float:
    i = min(len(sorted_values) - 1, max(0, int(q * len(sorted_values) + 0.999999) - 1))
    return sorted_values[i]


SCREEN = 24
"""``--summary`` fits one terminal screen; ``--fields`` has every field's statistics."""
GAP_TICKS = 5
"""Threshold crossings of one series less than this many ticks apart are one episode."""


def print_summary(src, frames, config, start: float | None = None) -> None:
    """One row per event: the findings, then each series' outlier episodes (worst first), within
    one screen; ``start`` leaves out what ended before it.  The frames are judged as the
    recorder and the dashboard judge them (``sgmon.judgement``)."""
    live = {h: fl for h, fl in frames.items() if fl}
    first = min(fl[0].time for fl in live.values())
    last = max(fl[-1].time for fl in live.values())
    hosts = ", ".join(f"{h} ({fl[0].role or 'no role'}, {len(fl)} ticks)" for h, fl in live.items())
    lines = [f"== {hosts}: {fmt_utc(first)} .. {_hms(last)} UTC"]
    found, runs = _judged(src, live, config, GAP_TICKS * (src.interval or 1.0))
    lines += _finding_lines([f for f in found if start is None or (f.end or last) >= start])
    episodes = [r for r in runs if start is None or r[2] >= start]
    episodes.sort(key=lambda e: (e[7] != "crit", e[1], e[0]))
    lines += _episode_lines(episodes, max(3, SCREEN - len(lines) - 2))
    print("\n".join(lines))


def _finding_lines(found: list) -> list[str]:
    """The findings, each with its span and how its severity went."""
    lines = [f"findings ({len(found)}):" if found else "findings: none"]
    for f in found:
        span = f"{_hms(f.start)}-{_hms(f.end) if f.end else 'end'}"
        lines.append(f"  {span:<17} {f.severity.upper():<4} {f.host}: {f.title}")
        if steps := f.history(_hms):
            lines.append(f"  {'':<17} became {steps}")
    return lines


def _episode_lines(episodes: list[list], room: int) -> list[str]:
    """The outlier episodes, worst first, as many as there is ``room`` for."""
    from sgmon.units import fmt_num

    lines = [f"outlier episodes ({len(episodes)}, worst first):" if episodes else "outliers: none"]
    for host, t0, t1, c, inst, col, peak, sev in episodes[:room]:
        span = _hms(t0) if t0 == t1 else f"{_hms(t0)}-{_hms(t1)}"
        lines.append(f"  {span:<17} {sev:<4} {host} {c} {inst} {col} peak {fmt_num(peak)}")
    if len(episodes) > room:
        lines.append(f"  ... {len(episodes) - room} more; --fields for every field's statistics")
    return lines


def _judged(src, frames, config, gap: float) -> tuple[list, list]:
    """Judge the whole recording in time order: its findings, each once with its start and end,
    and the cells graded warn or crit merged into episodes (grades less than ``gap`` s apart are
    one), as [host, start, end, collector, instance, column, peak, severity]."""
    from sgmon.judgement import judge_for

    judge = judge_for(config, [src])
    merged = sorted((f for fl in frames.values() for f in fl), key=lambda f: (f.time, f.host))
    found: dict[tuple[str, float], object] = {}
    open_runs: dict[tuple, list] = {}
    done: list[list] = []
    for fr in merged:
        j = judge(fr)
        for f in (*j.opened, *j.closed):
            found[(f.key, f.start)] = f
        for c, inst, name, v in _graded_cells(j):
            sev = j.grade(c, inst, name)
            if sev not in ("warn", "crit"):
                continue
            key = (fr.host, c, inst, name)
            r = open_runs.get(key)
            if r is not None and fr.time - r[2] > gap:
                done.append(open_runs.pop(key))
                r = None
            if r is None:
                meta = j.grader.meta(fr.host, c, name)
                column = meta.column if meta else name
                open_runs[key] = [fr.host, fr.time, fr.time, c, inst, column, v, sev]
            else:
                r[2], r[6] = fr.time, max(r[6], v)
                r[7] = "crit" if "crit" in (r[7], sev) else sev
    if judge.analyzer is not None:  # as they stand at the end (a finding rises as it goes)
        for f in judge.analyzer.state().findings:
            found[(f.key, f.start)] = f
    done.extend(open_runs.values())
    return sorted(found.values(), key=lambda f: (f.start, f.key)), done


def _graded_cells(j):
    """(collector, instance, field, value) of the numeric cells that can grade above ok: those
    with a limit and those the analysis has an open outlier on."""
    frame, grader = j.frame, j.grader
    for c, res in frame.collectors.items():
        for inst, row in res.rows.items():
            for name, v in row.items():
                if type(v) in (int, float) and (
                    grader.may_limit(frame.host, c, name) or j.outlier(c, inst, name) is not None
                ):
                    yield c, inst, name, float(v)


def print_fields(src, frames) -> None:
    """Per collector and field: min, median, p99, max (with where the max was)."""
    from sgmon.model import Kind
    from sgmon.units import fmt_num

    for host, fl in frames.items():
        if not fl:
            continue
        print(f"== {host} ({fl[0].role or 'no role'}): {len(fl)} ticks")
        for c, fields in src.schema(host).items():
            printed = False
            for f in fields:
                if f.kind in (Kind.TEXT, Kind.HISTOGRAM):
                    continue
                vals = []
                worst = (float("-inf"), "", 0.0)
                for fr in fl:
                    for inst, row in fr.rows(c).items():
                        v = row.get(f.name)
                        if isinstance(v, int | float):
                            vals.append(float(v))
                            if v > worst[0]:
                                worst = (float(v), inst, fr.time)
                if not vals:
                    continue
                if not printed:
                    print(f"  {c}")
                    printed = True
                vals.sort()
                q = [fmt_num(v) for v in (vals[0], _quantile(vals, 0.5), _quantile(vals, 0.99))]
                print(
                    f"    {f.column:<22} min {q[0]:>7}  med {q[1]:>7}  p99 {q[2]:>7}"
                    f"  max {fmt_num(vals[-1]):>7}  ({worst[1]} {_hms(worst[2])})"
                )


def print_at(src, frames, text: str) -> None:
    """The tick at or just before TIME, for every host."""
    first = min(fl[0].time for fl in frames.values() if fl)
    t = instant("--at", text, first)
    for host, fl in frames.items():
        before = [f for f in fl if f.time <= t + 1e-6]
        if not before:
            print(f"== {host}: nothing recorded at or before {fmt_utc(t)}")
            continue
        fr = before[-1]
        print(f"== {host} ({fr.role or 'no role'}) at {fmt_utc(fr.time)} UTC")
        for c, res in fr.collectors.items():
            note = f" [{res.status.value}: {res.error}]" if res.status.value != "ok" else ""
            print(f"  {c}{note}")
            for inst, row in res.rows.items():
                print(f"    {inst}: " + " ".join(_cells(row)))
        for e in fr.events:
            print(f"  event {_hms(e.time)} {e.collector} {e.kind} {e.instance} {e.text}")


def _cells(row: dict) -> list[str]:
    """A row's ``name=value`` cells: numbers as the dashboard shows them, a histogram's
    buckets hit as ``bound:count``."""
    from sgmon.units import fmt_num

    cells = []
    for name, v in row.items():
        if isinstance(v, list):
            v = " ".join(f"{b}:{n}" for b, n in v if n)
        cells.append(f"{name}={fmt_num(v) if isinstance(v, int | float) else v}")
    return cells
