"""The typed contract between the collectors and everything that reads their rows.

A collector declares its fields (``Collector.fields``) and its row kinds (``Collector.rows``)
once, in its own module.  The code that reads frames (the analysis, the panels, the sinks, the
report, the commands) never names a field by a string: it reaches each one through a typed
reference in ``sgmon/fields.py``, a module generated from those declarations
(``python -m sgmon.contract`` writes it; a unit test fails when it is stale).  A misspelt field
is an attribute that does not exist: mypy refuses it, and Python raises at the first use.

A reference knows its collector and its name, and reads the value in the type its kind gives:
a number (gauge, rate, delta) as ``float | None``, a text as ``str | None``, a histogram as a
``Histogram``.  A row kind names the instances of one kind in a collector's rows (the database
row ``db``, a destination ``dest_2``, a thread ``thread_1``, a device, a socket) and the label
an exporter gives them, so no reader parses instance names by hand.
"""

from __future__ import annotations

import json
import keyword
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from sgmon import buckets
from sgmon.model import Kind, Rows, Value, number

if TYPE_CHECKING:
    from sgmon.collector import Collector

Row = Mapping[str, Value]
"""One instance's row in a frame: field name -> value."""


class HasRows(Protocol):
    """What a reference reads a value from: a frame (``Frame.rows``) or a view of one."""

    def rows(self, collector: str) -> Rows: ...


class Ref:
    """A field of a collector, as the readers of frames name it."""

    __slots__ = ("collector", "name")

    def __init__(self, collector: str, name: str) -> None:
        self.collector = collector
        self.name = name

    def raw(self, row: Row | None, default: Value = None) -> Value:
        """The value as the row holds it (``default`` where the row or the field is missing:
        a field absent is not a field present with no value)."""
        return default if row is None else row.get(self.name, default)

    def raw_at(self, frame: HasRows | None, instance: str) -> Value:
        """The value of ``instance`` in ``frame`` as its row holds it."""
        return self.raw(self.row(frame, instance))

    def key(self, host: str, instance: str) -> tuple[str, str, str, str]:
        """The series key of this field of ``instance`` on ``host`` (the analysis' and the
        grading's ``(host, collector, instance, field)``)."""
        return (host, self.collector, instance, self.name)

    def path(self, instance: str) -> tuple[str, str, str]:
        """``(collector, instance, field)``: a series on any host, the cell a judgement
        grades."""
        return (self.collector, instance, self.name)

    def row(self, frame: HasRows | None, instance: str) -> Row | None:
        """The row of ``instance`` in ``frame``'s rows of this field's collector."""
        return None if frame is None else frame.rows(self.collector).get(instance)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.collector!r}, {self.name!r})"


class Num(Ref):
    """A number field (gauge, rate or delta)."""

    __slots__ = ()

    def of(self, row: Row | None) -> float | None:
        """The value as a number; None where it is not one this tick."""
        return None if row is None else number(row.get(self.name))

    def at(self, frame: HasRows | None, instance: str) -> float | None:
        """The value of ``instance`` in ``frame``."""
        return self.of(self.row(frame, instance))


class Text(Ref):
    """A text field (a state, a name, an address)."""

    __slots__ = ()

    def of(self, row: Row | None) -> str | None:
        """The value as text; None where the row has none."""
        v = None if row is None else row.get(self.name)
        return None if v is None else str(v)

    def at(self, frame: HasRows | None, instance: str) -> str | None:
        """The value of ``instance`` in ``frame``."""
        return self.of(self.row(frame, instance))


@dataclass(frozen=True, slots=True)
class Histogram:
    """One interval's bucket counts: ``(upper bound, count)`` pairs in the field's unit, the
    last bound None for the open bucket.  The one histogram type every reader shares."""

    pairs: tuple[tuple[float | None, float], ...]

    @classmethod
    def of(cls, value: Value) -> Histogram | None:
        """A row's histogram value as a Histogram (None where it is not one)."""
        if not isinstance(value, list | tuple):
            return None
        pairs: list[tuple[float | None, float]] = []
        for p in value:
            if not isinstance(p, list | tuple) or len(p) != 2:
                return None
            bound, count = number(p[0]), number(p[1])
            if count is None or (bound is None and p[0] is not None):
                return None
            pairs.append((bound, count))
        return cls(tuple(pairs))

    @property
    def bounds(self) -> tuple[float | None, ...]:
        """The upper bounds, ascending (None: the open bucket)."""
        return tuple(b for b, _ in self.pairs)

    @property
    def counts(self) -> tuple[float, ...]:
        """The counts, bucket by bucket."""
        return tuple(c for _, c in self.pairs)

    @property
    def total(self) -> float:
        """How many were counted in all buckets."""
        return sum(c for _, c in self.pairs)

    def quantile(self, q: float) -> float | None:
        """The ``q`` quantile (0-1), the upper bound of the bucket it falls in (seed 000,
        Table 5: from the buckets, never from an average); None when nothing was counted."""
        return buckets.percentile(self.as_lists(), q)

    def as_lists(self) -> list[list[float | None]]:
        """The ``[[bound, count], ...]`` form frames and recordings hold."""
        return [[b, c] for b, c in self.pairs]


class Hist(Ref):
    """A histogram field (interval bucket counts)."""

    __slots__ = ()

    def of(self, row: Row | None) -> Histogram | None:
        """The value as a Histogram; None where the row has none."""
        return None if row is None else Histogram.of(row.get(self.name))

    def at(self, frame: HasRows | None, instance: str) -> Histogram | None:
        """The value of ``instance`` in ``frame``."""
        return self.of(self.row(frame, instance))


@dataclass(frozen=True, slots=True)
class RowKind:
    """One kind of row a collector keeps: ``fixed`` names the one instance of a whole-host or
    database row (``db``, ``host``, ``all``), ``prefix`` the instances of a kind that share it
    (``dest_2``); neither, the collector's other rows (a device, a socket, an event).
    ``label`` is the exporter's dimension label for it (empty for a whole row)."""

    name: str
    label: str = ""
    fixed: str = ""
    prefix: str = ""
    on_request: bool = False
    """An exporter exposes these rows only when asked (a series per CPU and field)."""
    others: tuple[str, ...] = ()
    """For a catch-all kind, the fixed instances and the prefixes (ending in ``_``) of its
    collector's other kinds, which are not its rows (the tcp host row is no socket)."""

    def matches(self, instance: str) -> bool:
        """Whether ``instance`` is a row of this kind (a catch-all kind: any row no other kind
        of its collector takes)."""
        if self.fixed:
            return instance == self.fixed
        if self.prefix:
            return instance.startswith(self.prefix)
        return not any(instance == o or (o.endswith("_") and instance.startswith(o))
                       for o in self.others)  # fmt: skip

    def ident(self, instance: str) -> str:
        """What names the row within its kind: ``dest_2`` -> ``2``."""
        return instance.removeprefix(self.prefix)

    def instance(self, ident: object) -> str:
        """The instance of the row named ``ident``: ``2`` -> ``dest_2``."""
        return self.fixed or f"{self.prefix}{ident}"

    def of(self, rows: Mapping[str, Row]) -> dict[str, Row]:
        """The rows of this kind, by instance, in the rows' order."""
        return {i: r for i, r in rows.items() if self.matches(i)}

    def idents(self, rows: Mapping[str, Row]) -> Iterator[tuple[str, Row]]:
        """``(ident, row)`` for each row of this kind."""
        for i, r in rows.items():
            if self.matches(i):
                yield self.ident(i), r


def row_kind(kinds: Sequence[RowKind], instance: str) -> RowKind | None:
    """The kind ``instance`` is a row of: a fixed or prefixed kind before a catch-all."""
    ranked = sorted(kinds, key=lambda k: (not k.fixed, not k.prefix))
    return next((k for k in ranked if k.matches(instance)), None)


_REF = {Kind.TEXT: "Text", Kind.HISTOGRAM: "Hist"}


def render(collectors: Iterable[type[Collector]]) -> str:
    """The source of ``sgmon/fields.py`` for ``collectors``: a class per collector with a typed
    reference per field and a ``Rows`` class of its row kinds."""
    out = [
        '"""Typed references to the built-in collectors\' fields and row kinds, generated from',
        "their declarations by ``python -m sgmon.contract`` (do not edit: a unit test fails when",
        'this file differs from what the declarations make).  See ``sgmon/contract.py``."""',
        "",
        "from __future__ import annotations",
        "",
        "from typing import ClassVar, Final",
        "",
        "from sgmon.contract import Hist, Num, RowKind, Text",
    ]
    for c in collectors:
        out += _collector_class(c)
    return "\n".join(out) + "\n"


def _collector_class(c: type[Collector]) -> list[str]:
    """One collector's class: its name, a reference per field, its row kinds."""
    out = ["", "", f"class {c.name.upper()}:", f'    """``{c.name}``: {c.description}"""', ""]
    out.append(f"    name: ClassVar[str] = {_q(c.name)}")
    for f in c.fields:
        if not f.name.isidentifier() or keyword.iskeyword(f.name) or f.name == "name":
            raise ValueError(f"{c.name}.{f.name}: not usable as an attribute name")
        out.append(f"    {f.name}: Final = {_REF.get(f.kind, 'Num')}({_q(c.name)}, {_q(f.name)})")
    out += ["", "    class Rows:", f'        """The kinds of ``{c.name}``\'s rows."""', ""]
    siblings = tuple(k.fixed or k.prefix for k in c.rows if k.fixed or k.prefix)
    out += [f"        {k.name}: Final = {_row_kind(k, siblings)}" for k in c.rows]
    return out


def _row_kind(k: RowKind, siblings: tuple[str, ...]) -> str:
    """A row kind's constructor call, with a catch-all's ``others``."""
    args = [_q(k.name)]
    args += [f"{a}={_q(getattr(k, a))}" for a in ("label", "fixed", "prefix") if getattr(k, a)]
    if k.on_request:
        args.append("on_request=True")
    if not (k.fixed or k.prefix) and siblings:
        args.append(f"others={_tuple(siblings)}")
    return f"RowKind({', '.join(args)})"


def _tuple(texts: tuple[str, ...]) -> str:
    """A tuple of string literals as ruff's formatter writes it: a trailing comma makes it
    explode the tuple onto lines of its own, so only a one-item tuple has one."""
    items = ", ".join(_q(t) for t in texts)
    return f"({items},)" if len(texts) == 1 else f"({items})"


def _q(text: str) -> str:
    """A string literal as ruff's formatter writes it."""
    return json.dumps(text)


def builtins() -> list[type[Collector]]:
    """The built-in collector classes, in the registry's order."""
    from sgmon import registry

    return [registry.builtin(n) for n in registry.builtin_names()]


if __name__ == "__main__":
    import pathlib

    path = pathlib.Path(__file__).with_name("fields.py")
    path.write_text(render(builtins()))
    print(f"wrote {path}")
