"""`sgmon replay DIR`: a recording in the dashboard, summed up (--summary), or one tick (--at)."""

from __future__ import annotations

import argparse
import sys
from datetime import UTC, datetime

from sgmon.cli import UsageError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Archive directory and what to show."""
    parser.add_argument("dir", help="an archive written by sgmon record --dir")
    parser.add_argument("--summary", action="store_true", help="min/median/p99/max, outliers")
    parser.add_argument("--at", metavar="TIME", help="print the tick at TIME (ISO or HH:MM:SS)")
    parser.add_argument("--speed", type=float, default=1.0, help="playback speed (dashboard)")


def run(args: argparse.Namespace) -> int:
    """Load the archive and show it."""
    from sgmon.archive import ArchiveError
    from sgmon.hosts.replay import ReplaySource

    try:
        src = ReplaySource(args.dir, speed=args.speed)
        frames = {h.name: src.frames(h.name) for h in src.hosts}
    except ArchiveError as e:
        raise UsageError(str(e)) from None
    if not any(frames.values()):
        raise UsageError(f"{args.dir} holds no recorded ticks")
    code = 0
    if args.at:
        print_at(src, frames, args.at)
    elif args.summary:
        print_summary(src, frames)
    else:
        try:
            from sgmon.tui.app import run_dashboard
        except ImportError as e:
            print(f"sgmon: dashboard not available ({e}); showing --summary", file=sys.stderr)
            print_summary(src, frames)
        else:
            code = run_dashboard(sources=[src], config=None, title=f"replay {args.dir}")
    if src.skipped:
        print(f"sgmon: {src.skipped} torn or malformed row(s) skipped", file=sys.stderr)
    return code


def _hms(t: float) -> str:
    return datetime.fromtimestamp(t, UTC).strftime("%H:%M:%S")


def _quantile(sorted_values: list[float], q: float) -> float:
    i = min(len(sorted_values) - 1, max(0, int(q * len(sorted_values) + 0.999999) - 1))
    return sorted_values[i]


def print_summary(src, frames) -> None:
    """Per collector and field: min, median, p99, max (with where the max was); then outliers."""
    from sgmon.model import Kind
    from sgmon.sinks.statefile import grade
    from sgmon.units import fmt_num

    for host, fl in frames.items():
        if not fl:
            continue
        print(
            f"== {host} ({fl[0].role or 'no role'}): {len(fl)} ticks, "
            f"{_iso(fl[0].time)} .. {_iso(fl[-1].time)} UTC"
        )
        schema = src.schema(host)
        for c, fields in schema.items():
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
        runs = _outlier_runs(fl, schema, grade)
        print(f"  outliers ({len(runs)}):" if runs else "  outliers: none above the thresholds")
        for start, end, c, inst, col, peak, sev in runs[:40]:
            span = _hms(start) if start == end else f"{_hms(start)}-{_hms(end)}"
            print(f"    {span:<17} {sev:<4} {c} {inst} {col} peak {fmt_num(peak)}")
        if len(runs) > 40:
            print(f"    ... {len(runs) - 40} more")
    print_findings(frames)


def print_findings(frames) -> None:
    """The analysis' findings over the whole recording, in the order they opened."""
    from sgmon.analysis import Analyzer  # part of sgmon; imported here to keep --help quick

    merged = sorted((f for fl in frames.values() for f in fl), key=lambda f: (f.time, f.host))
    analyzer = Analyzer()
    opened = []
    for f in merged:
        analyzer.feed(f)
        opened.extend(analyzer.changes()[0])
    print(f"== findings ({len(opened)})" if opened else "== findings: none")
    for x in opened[:30]:
        print(f"  {_hms(x.start)} {x.severity:<4} {x.host}: {x.title}")
        for line in x.evidence[:2]:
            print(f"      {line}")
    if len(opened) > 30:
        print(f"  ... {len(opened) - 30} more")


def _outlier_runs(fl, schema, grade):
    """Threshold crossings merged into runs of consecutive ticks, in time order."""
    open_runs: dict[tuple, list] = {}
    done: list[list] = []
    for fr in fl:
        seen = set()
        for c, fields in schema.items():
            for inst, row in fr.rows(c).items():
                for f in fields:
                    sev = grade(f, row.get(f.name))
                    if sev == "ok":
                        continue
                    key = (c, inst, f.column)
                    seen.add(key)
                    v = float(row[f.name])
                    r = open_runs.get(key)
                    if r is None:
                        open_runs[key] = [fr.time, fr.time, c, inst, f.column, v, sev]
                    else:
                        r[1], r[5] = fr.time, max(r[5], v)
                        r[6] = "crit" if "crit" in (r[6], sev) else sev
        for key in [k for k in open_runs if k not in seen]:
            done.append(open_runs.pop(key))
    done.extend(open_runs.values())
    return sorted(done, key=lambda r: r[0])


def _iso(t: float) -> str:
    return datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%d %H:%M:%S")


def _parse_at(text: str, first: float) -> float:
    from sgmon.archive import parse_time

    try:
        return parse_time(text)
    except ValueError:
        pass
    try:
        hms = datetime.strptime(text, "%H:%M:%S" if text.count(":") == 2 else "%H:%M")
    except ValueError:
        raise UsageError(
            f"--at {text!r}: use 2026-11-21T14:02:11+00:00 or 14:02:11 (UTC)"
        ) from None
    day = datetime.fromtimestamp(first, UTC)
    return day.replace(
        hour=hms.hour, minute=hms.minute, second=hms.second, microsecond=0
    ).timestamp()


def print_at(src, frames, text: str) -> None:
    """The tick at or just before TIME, for every host."""
    from sgmon.units import fmt_num

    first = min(fl[0].time for fl in frames.values() if fl)
    t = _parse_at(text, first)
    for host, fl in frames.items():
        before = [f for f in fl if f.time <= t + 1e-6]
        if not before:
            print(f"== {host}: nothing recorded at or before {_iso(t)}")
            continue
        fr = before[-1]
        print(f"== {host} ({fr.role or 'no role'}) at {_iso(fr.time)} UTC")
        for c, res in fr.collectors.items():
            note = f" [{res.status.value}: {res.error}]" if res.status.value != "ok" else ""
            print(f"  {c}{note}")
            for inst, row in res.rows.items():
                cells = []
                for name, v in row.items():
                    if isinstance(v, list):
                        v = " ".join(f"{b}:{n}" for b, n in v if n)
                    cells.append(f"{name}={fmt_num(v) if isinstance(v, int | float) else v}")
                print(f"    {inst}: " + " ".join(cells))
        for e in fr.events:
            print(f"  event {_hms(e.time)} {e.collector} {e.kind} {e.instance} {e.text}")
