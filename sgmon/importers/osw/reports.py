"""The reports of each tool OSWatcher runs, on the live collectors' fields (see the package
docstring for what is taken from each)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from sgmon.importers.osw.files import Block, Reports
from sgmon.model import Rows, Value

SUBSTAMP = re.compile(
    r"^(?:Time: |\d\d/\d\d/\d{2,4} |\d{4}-\d\d-\d\dT)"
    r"(\d\d):(\d\d):(\d\d)(?:[+-]\d{4}|Z)?(?:\s+([AP]M))?$"
)
"""``iostat -t``'s report stamp: sysstat < 8's ``Time: 11:01:52``, later ones' locale date and
time (``02/29/12 11:01:52``, ``02/29/2012 11:01:52 AM``), or ``S_TIME_FORMAT=ISO``'s."""
BANNER = re.compile(r"^\w+ \S+ \([^)]*\)\s")
"""The first line of a sysstat tool's run (``Linux 2.6.18-194.el5 (cel01) 02/29/12``): the
report after it holds the averages since boot."""
CLOCK = re.compile(r"^(\d\d):(\d\d):(\d\d)(?:\s+([AP]M))?\s")
"""An mpstat report header's time of day (``11:01:57 AM  CPU  %usr ...``)."""
VMSTAT_HEAD = re.compile(r"^[ \t]*r[ \t]+b(?:[ \t]|$)", re.M)
"""vmstat's column-name line (`` r  b   swpd   free ...``)."""
TOP_HEAD = re.compile(r"^top - (\d\d):(\d\d):(\d\d) ")
LOAD = re.compile(r"load average: ([\d.,]+),? ([\d.,]+),? ([\d.,]+)")
TOP_PCT = re.compile(r"([\d.]+)\s*%?\s*(us|sy|ni|id|wa|hi|si|st)\b")
TOP_COUNT = re.compile(r"([\d.]+)[kmgt]?\s+(total|running|used)\b")
TOP_CPU = {
    "us": "usr",
    "sy": "sys",
    "ni": "nice",
    "id": "idle",
    "wa": "iowait",
    "hi": "irq",
    "si": "soft",
    "st": "steal",
}
"""top's ``%Cpu(s)`` shares -> cpu fields (taken where mpstat gave none)."""
PAGE_KB = 4.0
"""vmstat's si/so are kB/s; the live pswpin/pswpout are pages/s (4 kB pages on x86_64/x86)."""

IOSTAT = {
    "r/s": "r_s",
    "w/s": "w_s",
    "rkB/s": "rkb_s",
    "wkB/s": "wkb_s",
    "rrqm/s": "rrqm_s",
    "wrqm/s": "wrqm_s",
    "r_await": "r_await",
    "w_await": "w_await",
    "aqu-sz": "aqu_sz",
    "avgqu-sz": "aqu_sz",
    "rareq-sz": "rareq_sz",
    "wareq-sz": "wareq_sz",
    "%util": "util",
    "svctm": "svctm",
}
MPSTAT = {
    "%usr": "usr",
    "%user": "usr",
    "%nice": "nice",
    "%sys": "sys",
    "%system": "sys",
    "%iowait": "iowait",
    "%irq": "irq",
    "%soft": "soft",
    "%steal": "steal",
    "%guest": "guest",
    "%gnice": "gnice",
    "%idle": "idle",
}
VMSTAT_CPU = {"r": "runq_sz", "b": "blocked", "in": "intr", "cs": "cswch"}


def _tod(line: str) -> float | None:
    """A report's sub-stamp (``Time: 11:01:52``, ``02/29/12 11:01:52 AM``,
    ``2012-02-29T11:01:52-0500``) -> seconds after midnight; None for other lines."""
    m = SUBSTAMP.match(line.strip())
    return _clock(*m.groups()) if m else None


def _clock(h: str, mi: str, sec: str, ampm: str | None) -> float:
    hour = int(h) % 12 + (12 if ampm == "PM" else 0) if ampm else int(h)
    return hour * 3600.0 + int(mi) * 60 + int(sec)


def num(text: str) -> float | None:
    """A figure as the tools print it (a decimal comma in some locales); None if none."""
    try:
        return float(text.replace(",", "."))
    except ValueError:
        return None


def iostat(lines: list[str], step: float | None = None) -> list[Block]:
    """Every ``Device`` table of the block (iostat -x, any sysstat version), each at its
    sub-stamp's time (``iostat -t``) or its place in the run; a report cut short ends the
    block there."""
    out: list[Block] = []
    tod: float | None = None
    banner = False
    cols: list[str] = []
    disks: Rows = {}

    def close() -> None:
        if disks:
            r = Block(0.0, "iostat", {"disk": dict(disks)}, tod=tod)
            r.since_boot = banner and not out
            r.offset = (step or 0.0) * len(out)
            out.append(r)
        disks.clear()

    for ln in lines:
        parts = ln.split()
        if BANNER.match(ln):
            close()
            banner, cols = True, []
        elif (stamp := _tod(ln)) is not None:
            close()
            tod, cols = stamp, []
        elif ln.startswith("Device"):
            close()
            cols = [c.rstrip(":") for c in parts]
        elif not parts:
            close()
            cols = []
        elif cols:
            if len(parts) != len(cols):
                disks.clear()  # a row cut short: the report is lost
                break
            disks[parts[0]] = _disk(dict(zip(cols, parts, strict=True)))
    close()
    return out


def _disk(d: dict[str, str]) -> dict[str, Value]:
    """One ``iostat -x`` device row by its column names, on the disk collector's fields."""
    row: dict[str, Value] = {f: num(d[k]) for k, f in IOSTAT.items() if k in d}
    if "rkB/s" not in d and "rsec/s" in d:  # iostat -x without -k
        row["rkb_s"] = (num(d["rsec/s"]) or 0.0) / 2
        row["wkb_s"] = (num(d.get("wsec/s", "")) or 0.0) / 2
    if "await" in d and "r_await" not in d:
        row["r_await"] = row["w_await"] = num(d["await"])
    _unrequested(row, row.get("r_s") or 0.0, row.get("w_s") or 0.0)
    return row


def _unrequested(row: dict[str, Value], reads: Value, writes: Value) -> None:
    """Averages over no requests (a device that did not read, or write) as the live collector
    has them: none."""
    for f, n in (("r_await", reads), ("rareq_sz", reads), ("w_await", writes)):
        if not n:
            row[f] = None
    if not writes:
        row["wareq_sz"] = None
    if not reads and not writes:
        row["svctm"] = None


def vmstat(lines: list[str], step: float | None = None) -> list[Block]:
    """``vmstat 1 3``'s last line (the last second), by the column names; in a continuous
    run (``Sample interval`` on the ``zzz`` line) every line, each at its place in the run.
    The first line (averages since boot) is never a sample (in a run, it is marked so and
    skipped with the reading's note); a damaged line (cut short, or not numbers) is skipped
    and counted, the lines around it kept in their places."""
    cols, data, damaged = _vmstat_table(lines)
    out = Reports()
    out.damaged = damaged
    whole = [(i, v) for i, v in enumerate(data) if v is not None and (step or i > 0)]
    for i, values in whole if step else whole[-1:]:
        d = {k: num(v) for k, v in zip(cols, values, strict=True)}
        blk = Block(0.0, "vmstat", _vmstat_rows(d))
        blk.offset, blk.since_boot = (step or 0.0) * i, i == 0
        out.append(blk)
    return out


def _vmstat_table(lines: list[str]) -> tuple[list[str], list[list[str] | None], int]:
    """vmstat's column names, its lines of numbers in their places (None: damaged), and how
    many were damaged.  The lines before the first column-name line are passed over at the
    regular expression's speed, not split one by one."""
    cols: list[str] = []
    data: list[list[str] | None] = []
    text = "\n".join(lines)
    head = VMSTAT_HEAD.search(text)
    for ln in lines[text.count("\n", 0, head.start()) :] if head else ():
        parts = ln.split()
        if parts[:2] == ["r", "b"]:
            cols = parts
        elif cols and parts and not parts[0].startswith("procs"):
            fits = len(parts) == len(cols) and all(num(p) is not None for p in parts)
            data.append(parts if fits else None)
    return cols, data, sum(v is None for v in data)


def _vmstat_rows(d: dict[str, float | None]) -> dict[str, Rows]:
    """One vmstat line on the cpu and paging collectors' ``all`` rows."""
    cpu: dict[str, Value] = {f: d[k] for k, f in VMSTAT_CPU.items() if k in d}
    paging: dict[str, Value] = {"pgpgin": d.get("bi"), "pgpgout": d.get("bo")}
    for k, f in (("si", "pswpin"), ("so", "pswpout")):
        v = d.get(k)
        paging[f] = v / PAGE_KB if v is not None else None
    return {"cpu": {"all": cpu}, "paging": {"all": paging}}


def mpstat(lines: list[str], step: float | None = None) -> list[Block]:
    """Every interval report of ``mpstat`` (not its Average lines): ``-P ALL`` prints a header
    per report, and the report is at the header's time; a continuous ``mpstat 5 720`` prints
    one header for the run and a stamped row per report, each at its row's time.  A report
    cut short ends the block there."""
    out: list[Block] = []
    run = _MpstatRun()
    for ln in lines:
        parts = ln.split()
        if "CPU" in parts and not ln.startswith("Average"):
            out += run.end()
            run = _MpstatRun(parts, _stamp(ln))
        elif not parts or parts[0].startswith("Average"):
            out += run.end()
            run = _MpstatRun()
        elif run.cols:
            if len(parts) != len(run.cols):
                run.cpus.clear()  # a row cut short: its report is lost
                break
            run.row(parts, _stamp(ln))
    return out + run.end()


@dataclass
class _MpstatRun:
    """The reports under one mpstat header."""

    cols: list[str] = field(default_factory=list)
    head: float | None = None
    """The header's time of day."""
    reports: list[Block] = field(default_factory=list)
    cpus: Rows = field(default_factory=dict)
    tod: float | None = None

    def row(self, parts: list[str], at: float | None) -> None:
        """One CPU's row; a row stamped otherwise than the report's begins the next one."""
        if at is not None and at != self.tod:
            self._close()
            self.tod = at
        d = dict(zip(self.cols, parts, strict=True))
        inst = "all" if d["CPU"] == "all" else f"cpu{d['CPU']}"
        self.cpus[inst] = {f: num(d[k]) for k, f in MPSTAT.items() if k in d}

    def _close(self) -> None:
        if "all" in self.cpus:
            rows: dict[str, Rows] = {"cpu": dict(self.cpus)}
            self.reports.append(Block(0.0, "mpstat", rows, tod=self.tod))
        self.cpus.clear()

    def end(self) -> list[Block]:
        """The header's reports: one is at the header's time (as the importer always took
        ``-P ALL``'s, the interval's start), those of a continuous run at their rows'."""
        self._close()
        if len(self.reports) == 1:
            self.reports[0].tod = self.head
        return self.reports


def _stamp(line: str) -> float | None:
    """An mpstat line's time of day (``11:01:57 AM  CPU ...``, ``11:01:58  all ...``)."""
    m = CLOCK.match(line)
    return _clock(*m.groups()) if m else None


def top(lines: list[str], step: float | None = None) -> list[Block]:
    """top's summary: the load averages, ``%Cpu(s)`` (``Cpu(s)`` before procps-ng), ``Tasks``
    and the swap line, each ``top -`` header a report at its own time.  xtop.sh keeps the
    second half of two top samples by line count, which misses the second header when the
    first sample was longer: the summary lines left are read, at the ``zzz`` line's time; a
    block with no summary line at all gives no report (the reading says so in one line)."""
    out: list[Block] = []
    for ln in lines:
        head = TOP_HEAD.match(ln)
        if head:
            out.append(
                Block(0.0, "top", {"cpu": {"all": {}}}, tod=_clock(head[1], head[2], head[3], None))
            )
        elif not out and _summary(ln):  # a report that lost its "top -" line
            out.append(Block(0.0, "top", {"cpu": {"all": {}}}))
        if out:
            _top_line(out[-1], ln)
    return [b for b in out if b.rows["cpu"]["all"] or b.rows.get("paging")]


def _summary(ln: str) -> bool:
    """Whether a line is one of top's summary lines that ``_top_line`` reads."""
    return (
        "load average:" in ln
        or ln.startswith(("%Cpu(s):", "Cpu(s):", "Tasks:"))
        or "Swap:" in ln.split()[:2]
    )


def _top_line(blk: Block, ln: str) -> None:
    """One line of a top report's summary, on its cpu and paging rows."""
    cpu, paging = blk.rows["cpu"]["all"], blk.rows.setdefault("paging", {})
    if m := LOAD.search(ln):
        load = [num(x.rstrip(",")) for x in m.groups()]
        cpu.update(zip(("load1", "load5", "load15"), load, strict=True))
    elif ln.startswith(("%Cpu(s):", "Cpu(s):")):
        cpu.update({TOP_CPU[k]: num(v) for v, k in TOP_PCT.findall(ln)})
    elif ln.startswith("Tasks:"):
        n = {k: num(v) for v, k in TOP_COUNT.findall(ln)}
        cpu.update({"plist_sz": n.get("total"), "runq_sz": n.get("running")})
    elif "Swap:" in ln.split()[:2]:
        n = {k: num(v) for v, k in TOP_COUNT.findall(ln)}
        total, used = n.get("total"), n.get("used")
        swp = 100.0 * used / total if total and used is not None else None
        paging["all"] = {"swpused": swp}
