"""Trace files of the simulated pair, written the way LGWR, NSSn and RFS write them (seed 000).

The pair keeps them in a private temporary directory and points its ``oracle_trace`` collector
at them, so the demo shows slow-write warnings and NSS/RFS splits read by the real trace reader.
"""

from __future__ import annotations

import datetime as _dt
import tempfile
from collections.abc import Callable
from pathlib import Path

from sgmon.sim.model import TickStats

FLAG = 67111042  # as in seed 000's example lines


def stamp(epoch: float) -> str:
    """``2023-01-29T01:00:52.031166-06:00``: a 12.2+ trace timestamp, with its offset (the
    simulated pair is 19c), so the reader needs no zone for it."""
    return _dt.datetime.fromtimestamp(epoch).astimezone().isoformat(timespec="microseconds")


class TraceWriter:
    """Appends LGWR, NSS and RFS trace lines for an interval's slow writes, late RAC SCN acks
    and long remote writes."""

    def __init__(
        self,
        wall: Callable[[float], float],
        sid: str = "PROD",
        thread: int = 1,
        standby: str = "STBY",
    ) -> None:
        """``sid``: the primary instance's name; ``thread``: its redo thread (RAC: one NSS per
        instance, one RFS on the standby per thread); ``standby``: the name of the standby its
        RFS trace is of."""
        self._dir = tempfile.TemporaryDirectory(prefix="sgmon-sim-")
        base = Path(self._dir.name)
        self.paths = {
            "lgwr": base / f"{sid}_lgwr_4242.trc",
            "nss": base / f"{sid}_nss2_4243.trc",
            "rfs": base / f"{standby}_rfs_{5150 + thread}.trc",
        }
        self.thread = thread
        for p in self.paths.values():
            p.touch()
        self.wall = wall

    def write(self, st: TickStats) -> None:
        """Append this interval's lines."""
        w = self.wall
        lines = [(end, f"log write elapsed time {ms:.0f}ms, size {kb:.0f}KB")
                 for end, ms, kb in st.slow]  # fmt: skip
        # RAC, a late SCN ack, as a 12.2 LG00 trace prints it (tests/data/traces)
        lines += [(end, f"log write broadcast wait time {ms:.0f}ms (SCN 0x{scn:x})")
                  for end, ms, scn in st.bcast]  # fmt: skip
        if lines:
            with self.paths["lgwr"].open("a") as f:
                for end, text in sorted(lines):
                    f.write(f"\n*** {stamp(w(end))}\nWarning: {text}\n")
        if not st.remote:
            return
        with self.paths["nss"].open("a") as nss, self.paths["rfs"].open("a") as rfs:
            for msgid, seq, send, got, done, back, rfs_ms in st.remote:
                msg = f"oper='Write' flag={FLAG} thrd={self.thread} seq={seq} msgid={msgid}"
                nss.write(f"Client sending SQLNET request data [kpurcs] {msg}\n")
                nss.write(f"*** {stamp(w(send))} 5837 krsu.c\n")
                nss.write(f"*** {stamp(w(back))} 6058 krsu.c\n")
                nss.write(f"... Client received SQLNET call [kpurcs] response {msg}\n")
                rfs.write(f"... Server received SQLNET data [krsr_rfs_dsp] {msg}\n")
                rfs.write(f"*** {stamp(w(got))} 826 krsr.c\n")
                rfs.write(
                    "WAIT #0: nam='RFS write' ela= "
                    f"{rfs_ms * 1000:.0f} p1=0 p2=0 p3=0 obj#=-1 tim={w(done) * 1e6:.0f}\n"
                )
                rfs.write(f"... Server finished processing SQLNET data [krsr_rfs_dsp] {msg}\n")
                rfs.write(f"*** {stamp(w(done))} 1459 krsr.c\n")

    def close(self) -> None:
        """Remove the directory."""
        self._dir.cleanup()
