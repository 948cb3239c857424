"""The typed contract (sgmon/contract.py) and the references generated from it (sgmon/fields.py).

Every reader of frames trusts these few lines: a reference that read the wrong field, a row
kind that took another kind's rows, or a generated file behind its declarations would be wrong
everywhere at once.
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

import pytest

from sgmon import contract
from sgmon.collector import Collector
from sgmon.contract import Hist, Histogram, Num, RowKind, Text, row_kind
from sgmon.fields import ORACLE_DG, TCP
from sgmon.model import CollectorResult, Field, Frame, Kind, Rows, Status

FIELDS_PY = Path(contract.__file__).with_name("fields.py")
REGENERATE = "python -m sgmon.contract"


def drift(text: str) -> str | None:
    """Why ``text`` is not what the declarations make (None when it is)."""
    want = contract.render(contract.builtins())
    if text == want:
        return None
    have, made = text.splitlines(), want.splitlines()
    first = next(
        (i for i, (a, b) in enumerate(zip(have, made, strict=False)) if a != b),
        min(len(have), len(made)),
    )

    def line(lines: list[str]) -> str:
        return repr(lines[first]) if first < len(lines) else "the end of the file"

    return (
        f"sgmon/fields.py is stale: line {first + 1} is {line(have)}, the declarations make "
        f"{line(made)}; run `{REGENERATE}` to regenerate it"
    )


def test_fields_py_is_what_the_declarations_make() -> None:
    why = drift(FIELDS_PY.read_text())
    if why is not None:
        pytest.fail(why, pytrace=False)


def test_a_stale_fields_py_is_named_with_the_command_that_mends_it() -> None:
    text = FIELDS_PY.read_text()
    stale = text.replace('    rto: Final = Num("tcp", "rto")\n', "", 1)
    assert stale != text  # the field is in the file, so its loss is a real drift
    why = drift(stale)
    assert why is not None and REGENERATE in why and "rto" in why
    assert REGENERATE in (drift(text + "\n") or "")


class _Declared(Collector):
    """A collector whose declarations the renderer reads."""

    name = "declared"
    description = "a test's collector"
    fields = (
        Field("level", "", Kind.GAUGE, "a gauge"),
        Field("moved", "/s", Kind.RATE, "a rate"),
        Field("word", "", Kind.TEXT, "a text"),
        Field("lat", "ms", Kind.HISTOGRAM, "a histogram"),
    )
    rows: ClassVar[tuple[RowKind, ...]] = (
        RowKind("db", fixed="db"),
        RowKind("dest", label="dest", prefix="dest_"),
        RowKind("other", label="item", on_request=True),
    )

    def sample(self) -> Rows:
        return {}


def test_render_gives_each_kind_its_reference_and_each_row_kind_its_line() -> None:
    src = contract.render([_Declared])
    assert "class DECLARED:" in src
    assert 'name: ClassVar[str] = "declared"' in src
    assert 'level: Final = Num("declared", "level")' in src
    assert 'moved: Final = Num("declared", "moved")' in src
    assert 'word: Final = Text("declared", "word")' in src
    assert 'lat: Final = Hist("declared", "lat")' in src
    assert 'db: Final = RowKind("db", fixed="db")' in src
    assert 'dest: Final = RowKind("dest", label="dest", prefix="dest_")' in src
    # the catch-all names its siblings, as ruff writes a tuple (no trailing comma for two)
    assert (
        'other: Final = RowKind("other", label="item", on_request=True, others=("db", "dest_"))'
        in src
    )
    scope: dict[str, object] = {}
    exec(compile(src, "fields.py", "exec"), scope)  # the source runs, and its refs read
    made = scope["DECLARED"]
    assert made.lat.of({"lat": [[1, 2]]}) == Histogram(((1.0, 2.0),))
    assert not made.Rows.other.matches("dest_2") and made.Rows.other.matches("arch_1")


def test_a_catch_all_with_one_sibling_is_a_one_item_tuple() -> None:
    class OneSibling(_Declared):
        rows = (RowKind("host", fixed="host"), RowKind("socket", label="socket"))

    src = contract.render([OneSibling])
    assert 'socket: Final = RowKind("socket", label="socket", others=("host",))' in src


@pytest.mark.parametrize("bad", ["class", "name", "two words", "9lives"])
def test_render_refuses_a_field_that_cannot_be_an_attribute(bad: str) -> None:
    class Bad(_Declared):
        fields = (Field(bad, "", Kind.GAUGE, "unusable"),)

    with pytest.raises(ValueError, match="not usable as an attribute name"):
        contract.render([Bad])


def test_the_generated_classes_name_their_collector() -> None:
    assert TCP.name == "tcp" and ORACLE_DG.name == "oracle_dg"
    assert (TCP.rto.collector, TCP.rto.name) == ("tcp", "rto")
    assert isinstance(TCP.rto, Num) and isinstance(TCP.state, Text)
    assert isinstance(ORACLE_DG.resp_hist, Hist)
    assert repr(TCP.rto) == "Num('tcp', 'rto')"


def _frame(rows: Rows) -> Frame:
    return Frame(
        host="h",
        time=1.0,
        seq=1,
        interval=1.0,
        collectors={"tcp": CollectorResult(Status.OK, rows=rows)},
    )


@pytest.mark.parametrize(
    ("value", "want"),
    [(3, 3.0), (2.5, 2.5), ("3", None), (True, None), ([[1, 2]], None), (None, None)],
)
def test_num_reads_a_number_and_nothing_else(value: object, want: float | None) -> None:
    row = {"rto": value}
    assert TCP.rto.of(row) == want
    assert TCP.rto.raw(row) == value
    assert TCP.rto.of({"rtt": 5}) is None  # another field's value is not this one's
    assert TCP.rto.of(None) is None and TCP.rto.raw(None) is None


def test_raw_gives_the_default_only_where_the_field_is_absent() -> None:
    assert TCP.rto.raw({}, "") == "" and TCP.rto.raw(None, 0) == 0
    assert TCP.rto.raw({"rto": None}, 5) is None  # present with no value is not absent
    assert TCP.rto.raw({"rto": 0}, 5) == 0


def test_at_reads_the_instance_in_the_references_collector() -> None:
    frame = _frame({"a>b": {"rto": 204, "state": "ESTAB"}, "host": {"rto": 1}})
    assert TCP.rto.at(frame, "a>b") == 204.0
    assert TCP.state.at(frame, "a>b") == "ESTAB"
    assert TCP.rto.at(frame, "host") == 1.0
    assert TCP.rto.at(frame, "c>d") is None
    assert TCP.rto.at(None, "a>b") is None
    assert ORACLE_DG.role.at(frame, "a>b") is None  # oracle_dg has no rows in this frame
    assert TCP.rto.row(frame, "a>b") == {"rto": 204, "state": "ESTAB"}
    assert TCP.state.raw_at(frame, "a>b") == "ESTAB" and TCP.rto.raw_at(frame, "host") == 1
    assert TCP.state.raw_at(frame, "host") is None and TCP.rto.raw_at(None, "a>b") is None


@pytest.mark.parametrize(("value", "want"), [("ESTAB", "ESTAB"), (3, "3"), ("", ""), (None, None)])
def test_text_reads_any_value_as_text(value: object, want: str | None) -> None:
    assert TCP.state.of({"state": value}) == want
    assert TCP.state.of({}) is None and TCP.state.of(None) is None
    assert TCP.state.raw({"state": value}) == value


def test_key_and_path_name_the_series() -> None:
    assert TCP.rto.key("prim1", "a>b") == ("prim1", "tcp", "a>b", "rto")
    assert ORACLE_DG.apply_lag.key("stby", "db") == ("stby", "oracle_dg", "db", "apply_lag")
    assert ORACLE_DG.apply_lag.path("db") == ("oracle_dg", "db", "apply_lag")


def test_hist_reads_bucket_pairs() -> None:
    raw = [[1, 10], [2, 0], [4, 3], [None, 1]]
    h = ORACLE_DG.resp_hist.of({"resp_hist": raw})
    assert h == Histogram(((1.0, 10.0), (2.0, 0.0), (4.0, 3.0), (None, 1.0)))
    assert h.bounds == (1.0, 2.0, 4.0, None)
    assert h.counts == (10.0, 0.0, 3.0, 1.0)
    assert h.total == 14.0
    assert h.as_lists() == [[1.0, 10.0], [2.0, 0.0], [4.0, 3.0], [None, 1.0]]
    assert ORACLE_DG.resp_hist.raw({"resp_hist": raw}) is raw
    assert ORACLE_DG.resp_hist.of(None) is None and ORACLE_DG.resp_hist.of({}) is None
    assert Histogram.of(((1, 2), (None, 0))) == Histogram(((1.0, 2.0), (None, 0.0)))
    assert Histogram.of([]) == Histogram(())


@pytest.mark.parametrize(
    "bad",
    [
        "1,2",  # text
        3.0,  # a number
        None,
        [[1, 2, 3]],  # a triple
        [[1]],  # half a pair
        [1, 2],  # flat
        [[1, 2], "x"],  # one pair is not a pair
        [[1, None]],  # no count
        [["1", 2]],  # a bound that is no number
        [[1, "2"]],  # a count that is no number
        [[True, 2]],  # a bool is no bound
    ],
)
def test_histogram_of_a_bad_shape_is_none(bad: object) -> None:
    assert Histogram.of(bad) is None
    assert ORACLE_DG.resp_hist.of({"resp_hist": bad}) is None


def test_quantile_is_the_bound_of_the_bucket_it_falls_in() -> None:
    h = Histogram.of([[1, 10], [2, 0], [4, 0], [256, 1], [None, 0]])
    assert h is not None
    assert h.quantile(0.5) == 1.0
    assert h.quantile(0.9) == 1.0
    assert h.quantile(0.95) == 256.0
    assert h.quantile(1.0) == 256.0
    # the micro view's bounds are named as Oracle names them: 1.024 ms is the <1ms bucket
    micro = Histogram.of([[0.512, 0], [1.024, 3], [2.048, 1]])
    assert micro is not None and micro.quantile(0.5) == 1.0 and micro.quantile(1.0) == 2.0
    assert Histogram.of([[1, 0], [None, 0]]).quantile(0.5) is None
    assert Histogram(()).quantile(0.5) is None


DEST, THREAD, DB = ORACLE_DG.Rows.dest, ORACLE_DG.Rows.thread, ORACLE_DG.Rows.db
SOCKET, HOST = TCP.Rows.socket, TCP.Rows.host


def test_row_kinds_match_their_instances() -> None:
    assert DEST.matches("dest_2") and not DEST.matches("thread_2") and not DEST.matches("db")
    assert DB.matches("db") and not DB.matches("db2") and not DB.matches("dest_2")
    assert HOST.matches("host") and not HOST.matches("hostA")
    # a catch-all takes every row its collector's other kinds do not: the host row is no socket
    assert SOCKET.matches("10.0.0.1:1522>10.0.0.2:1521") and SOCKET.matches("hostA")
    assert not SOCKET.matches("host")
    rest = RowKind("rest", others=("db", "dest_"))
    assert rest.matches("thread_1") and rest.matches("db2") and rest.matches("dest")
    assert not rest.matches("db") and not rest.matches("dest_2")
    assert RowKind("any").matches("host")  # one with no siblings takes every row


def test_ident_and_instance_are_inverse() -> None:
    assert DEST.ident("dest_2") == "2" and DEST.instance(2) == "dest_2"
    assert DEST.instance(DEST.ident("dest_31")) == "dest_31"
    assert THREAD.instance("1") == "thread_1" and THREAD.ident("thread_1") == "1"
    assert HOST.instance(None) == "host" and DB.instance(7) == "db"
    assert DB.ident("db") == "db" and SOCKET.ident("a>b") == "a>b"


def test_of_and_idents_take_the_kinds_rows_in_order() -> None:
    rows: Rows = {
        "db": {"role": "PRIMARY"},
        "dest_3": {"status": "VALID"},
        "thread_1": {"seq": 7},
        "dest_2": {"status": "ERROR"},
    }
    assert list(DEST.of(rows)) == ["dest_3", "dest_2"]
    assert DEST.of(rows)["dest_2"] is rows["dest_2"]
    assert list(DEST.idents(rows)) == [("3", rows["dest_3"]), ("2", rows["dest_2"])]
    assert list(THREAD.idents(rows)) == [("1", rows["thread_1"])]
    assert DB.of(rows) == {"db": {"role": "PRIMARY"}}
    assert DEST.of({}) == {} and list(DEST.idents({})) == []


def test_row_kind_ranks_a_fixed_or_prefixed_kind_before_a_catch_all() -> None:
    catch_all_first = (SOCKET, HOST)
    assert row_kind(catch_all_first, "host") is HOST
    assert row_kind((RowKind("any"), HOST), "host") is HOST
    assert row_kind(catch_all_first, "a>b") is SOCKET
    anything = RowKind("other")
    assert row_kind((anything, DEST, DB), "dest_2") is DEST
    assert row_kind((anything, DEST, DB), "db") is DB
    assert row_kind((anything, DEST, DB), "arch") is anything
    assert row_kind((DB, DEST, THREAD), "arch") is None
    assert row_kind((), "db") is None
