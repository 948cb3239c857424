"""The report as one HTML file: findings, advice and budget as static HTML (readable with
scripts off), the chart data as JSON, and uPlot, its CSS and the page's script inlined, so
nothing is fetched when it opens.  Times are UTC, as ``check`` and ``replay`` print them."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from html import escape
from importlib.resources import files
from typing import TYPE_CHECKING, Any

from sgmon import __version__
from sgmon.report.summary import sentences
from sgmon.units import fmt_step, fmt_utc
from sgmon.verdicts import source_title

if TYPE_CHECKING:
    from sgmon.report.judged import Judged
    from sgmon.verdicts import Budget, Finding

UPLOT_VERSION = "1.6.32"
_HERE = files("sgmon.report")
_CATCH = (
    "window.addEventListener('error',function(e){var r=document.documentElement;"
    "r.dataset.errors=(r.dataset.errors?r.dataset.errors+' | ':'')+"
    "(e.message||'failed to load '+((e.target&&(e.target.src||e.target.href))||'?'))},true);"
)
"""First script of the page: any error (a script's, or a resource that failed to load) is
written into ``<html data-errors>`` for whoever reads the DOM."""


def _asset(name: str) -> str:
    return (_HERE / name).read_text(encoding="utf-8")


def _clock(t: float) -> str:
    return datetime.fromtimestamp(t, UTC).strftime("%H:%M:%S")


def advice(f: Finding) -> str | None:
    """What a finding says to do: its evidence's ``fix:``, where its rule gives one (the
    others say it in their title: "consider Fast Sync", "see rto_min")."""
    return next((e.split("fix: ", 1)[1] for e in f.evidence if "fix: " in e), None)


def _finding(f: Finding) -> str:
    span = f"{_clock(f.start)}-{_clock(f.end) if f.end else 'end'}"
    closed = "" if f.active else " (closed)"
    if steps := f.history(_clock):
        closed += f"; {steps}"
    evidence = "".join(f"<li>{escape(e)}</li>" for e in f.evidence)
    return (
        f'<li class="finding {f.severity}" data-rule="{escape(f.rule)}" data-seed="{f.seed}">'
        f'<span class="sev {f.severity}">{f.severity.upper()}</span>'
        f'<span class="title">{escape(f.host)}: {escape(f.title)}</span>'
        f'<div class="meta">{escape(f.rule)}, {escape(source_title(f.seed))}, {span} UTC{closed}; '
        f"runbook: docs/findings.md#{escape(f.rule)}</div>"
        f'<ul class="evidence">{evidence}</ul></li>'
    )


def _diagnosis(findings: list[Finding], note: str) -> str:
    if not findings:
        why = f" ({escape(note)})" if note else ""
        return f'<div class="diagnosis ok">No finding in this range{why}.</div>'
    top = findings[0]
    fix = advice(top)
    source = source_title(top.seed)
    todo = f"What to do ({source}): {fix}" if fix else f"Source: {source}."
    return (
        f'<div class="diagnosis" id="top-finding"><span class="sev {top.severity}">'
        f"{top.severity.upper()}</span>{escape(top.host)}: {escape(top.title)}"
        f'<div class="advice">{escape(todo)}</div></div>'
    )


def _budget(budgets: list[Budget]) -> str:
    if not budgets:
        return '<p class="none">No commit budget: no log file sync waits were recorded.</p>'
    lines = []
    for host in dict.fromkeys(b.host for b in budgets):
        mine = [b for b in budgets if b.host == host]
        last = mine[-1]
        peak = max(mine, key=lambda b: b.lfs_ms or 0.0)
        for what, shown in (("last", last), ("slowest", peak)):
            text = f"{host}, {what} interval ({_clock(shown.time)}): {shown.describe()}"
            lines.append(f"<li>{escape(text)}</li>")
    return f'<ul class="budget">{"".join(lines)}</ul>'


def _what_if(lines: list[str]) -> str:
    """What a change would buy: the window and log file sync now, then each change."""
    if not lines:
        return ""
    head, *changes = lines
    items = "".join(f"<li>{escape(line.strip())}</li>" for line in changes)
    return (
        f'<h2>What a change would buy</h2>\n<p class="what-if">{escape(head)}</p>'
        f'<ul class="what-if" id="what-if">{items}</ul>'
    )


def _regridded(judged: Judged) -> str:
    if judged.regridded is None:
        return ""
    return (
        " The hosts were sampled at different steps: judged and drawn on the coarsest, "
        f"{fmt_step(judged.regridded)} samples, as check --from judges them."
    )


def _summary(judged: Judged) -> str:
    """The opening sentences, with the impact's numbers as data for whoever checks them."""
    top = next((f for f in judged.findings if f.severity in ("warn", "crit")), None)
    said, got = sentences(judged, advice(top) if top is not None else None)
    attrs = ""
    if got is not None:
        attrs = (
            f' data-start="{got.start:.3f}" data-end="{got.end:.3f}"'
            f' data-commits="{got.commits:.1f}" data-lfs-during="{got.lfs_during or 0:.3f}"'
            f' data-lfs-before="{got.lfs_before or 0:.3f}"'
        )
    text = " ".join(escape(s) for s in said)
    return f'<p class="summary" id="summary"{attrs}>{text}</p>'


def _made(judged: Judged, simulated: str) -> str:
    """When the report was made; a simulated recording's clock may run ahead of it."""
    made = datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S")
    said = f"Made {made} UTC by sgmon {__version__}."
    if simulated:
        said += f" The recording is of a simulation ({simulated}), on its own simulated clock."
    return escape(said)


def render(
    judged: Judged, data: dict[str, Any], source: str, name: str = "", simulated: str = ""
) -> str:
    """The whole page: ``name`` is the configuration's (else ``source``, the directory's)."""
    hosts = ", ".join(f"{escape(h)} ({escape(r or 'no role')})" for h, r in judged.hosts)
    ticks = ", ".join(f"{escape(h)} {len(judged.frames.get(h, []))}" for h, _ in judged.hosts)
    payload = json.dumps(data, separators=(",", ":"), allow_nan=False).replace("</", "<\\/")
    findings = "".join(_finding(f) for f in judged.findings)
    day = datetime.fromtimestamp(judged.start, UTC).strftime("%Y-%m-%d")
    title = escape(f"{name or source}: incident report, {day}")
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="sgmon {__version__}">
<title>{title}</title>
<script>{_CATCH}</script>
<style>{_asset("vendor/uPlot.min.css")}</style>
<style>{_asset("report.css")}</style>
</head>
<body>
<h1>{title}</h1>
{_summary(judged)}
<div class="meta" id="range">{hosts}: {fmt_utc(judged.start)} to {fmt_utc(judged.end)} UTC,
interval {judged.interval:g} s, ticks {ticks}.{_regridded(judged)} {_made(judged, simulated)}
</div>
<h2>Diagnosis</h2>
{_diagnosis(judged.findings, judged.note)}
<h2>Findings ({len(judged.findings)})</h2>
<ol class="findings" id="findings">{findings}</ol>
<h2>Commit budget</h2>
{_budget(judged.budgets)}
{_what_if(judged.what_if)}
<div class="toolbar">Charts: drag across a chart to zoom every chart to that range;
double-click or <button id="whole" type="button">whole range</button> to zoom out; the
address keeps the zoom, to share the view. Shaded: the host's warning and critical findings;
dashed: log switches. Times UTC.</div>
<noscript><p>The charts need JavaScript; the findings above do not.</p></noscript>
<div id="charts"></div>
<script type="application/json" id="sgmon-data">{payload}</script>
<script>/* uPlot {UPLOT_VERSION}, MIT licence, (c) Leon Sorokin */
{_asset("vendor/uPlot.iife.min.js")}</script>
<script>{_asset("report.js")}</script>
</body>
</html>
"""
