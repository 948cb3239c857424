"""The README as a newcomer reads it: a section, its numbered steps, the commands a step shows
and the config it shows, taken from the text itself so that a journey walks what the page says
today, not a copy of it."""

from __future__ import annotations

import re


def section(text: str, title: str) -> str:
    """The text under ``## title``, up to the next ``## `` heading."""
    start = text.index(f"\n## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end >= 0 else len(text)]


def steps(text: str) -> dict[int, str]:
    """The numbered steps (``5. **Check it**: ...``), each as one line (its continuation lines
    joined, their indent dropped)."""
    out: dict[int, list[str]] = {}
    current: int | None = None
    for line in text.split("\n"):
        item = re.match(r"^(\d+)\. (.*)$", line)
        if item:
            current = int(item.group(1))
            out[current] = [item.group(2)]
        elif current is not None and line.startswith(" ") and line.strip():
            out[current].append(line.strip())
        else:
            current = None
    return {n: " ".join(parts) for n, parts in out.items()}


def commands(step: str) -> list[str]:
    """The shell commands a step shows in backticks (``export X=...; sgmon ...`` is two):
    those that run sgmon and those that export a variable."""
    found = []
    for span in re.findall(r"`([^`]+)`", step):
        for part in (p.strip() for p in span.split(";")):
            if re.match(r"^(sgmon(\s|$)|export \w+=)", part):
                found.append(part)
    return found


def toml_block(text: str) -> str:
    """The one ```toml block of a section."""
    blocks = re.findall(r"^```toml\n(.*?)^```", text, re.MULTILINE | re.DOTALL)
    assert len(blocks) == 1, f"{len(blocks)} toml blocks"
    return blocks[0]
