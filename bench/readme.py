"""Where the bench scripts write their results: a section each in bench/README.md."""

from __future__ import annotations

from pathlib import Path

README = Path(__file__).with_name("README.md")


def append_section(heading: str, block: str) -> None:
    """Add ``block`` at the end of the ``heading`` section (created at the end if missing), so
    each bench keeps its dated runs together whatever order the benches ran in."""
    old = README.read_text() if README.exists() else "# Benchmarks\n"
    if heading not in old:
        README.write_text(old.rstrip("\n") + f"\n\n{heading}\n\n{block}\n")
        return
    head, _, rest = old.partition(heading)
    nxt = rest.find("\n## ")
    section, tail = (rest, "") if nxt < 0 else (rest[: nxt + 1], rest[nxt + 1 :])
    sep = "\n" if tail else ""
    README.write_text(f"{head}{heading}{section.rstrip(chr(10))}\n\n{block}\n{sep}{tail}")
