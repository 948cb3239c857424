"""The dashboard's feed: what it keeps of each judged frame."""

from __future__ import annotations

from sgmon.hosts.sim import SimSource
from sgmon.judgement import Judge
from sgmon.monitor import History
from sgmon.tui.feed import Feed


def test_a_superseded_frames_grades_are_let_go_and_worked_out_again_alike():
    src = SimSource("rto-stall", onset=3.0)
    judge = Judge(schema_of=src.schema, live=False)
    feed = Feed(History(10), judge, keep=10)
    first = src.pair.step()
    second = src.pair.step()
    src.close()
    judged = {f.host: judge(f) for f in first}
    cells = {}
    for f in first:
        feed.add(f, judged[f.host], in_history=False)
        c, res = next((c, r) for c, r in f.collectors.items() if r.rows)
        inst, row = next(iter(res.rows.items()))
        cells[f.host] = (c, inst, next(iter(row)))
    graded = {h: judged[h].grade(*cells[h]) for h in judged}
    a, b = sorted(judged)
    newer = next(f for f in second if f.host == a)
    feed.add(newer, judge(newer), in_history=False)
    assert not judged[a]._grades  # the host moved on: its older frame's grades are let go
    assert judged[b]._grades  # the other host's newest keeps them
    assert judged[a].grade(*cells[a]) == graded[a]
    assert feed.verdict(next(f for f in first if f.host == a)) is judged[a]
