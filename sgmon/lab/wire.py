"""Redo shipping between the lab's log writer and its standby receivers.

A message is a header (kind, sequence, length, stamp) and the redo; the standby answers each with
the sequence once the redo is on its standby log (SYNC AFFIRM).  The stamp is when the log writer
took the redo (wall clock, which both namespaces share): the standby's transport lag is how old
the newest redo it holds was when it arrived.  A SWITCH message asks the standby to switch
standby logs, as a primary log switch does.
"""

from __future__ import annotations

import struct

HEAD = struct.Struct("!BQId")
ACK = struct.Struct("!Q")
REDO, SWITCH = 1, 2
PORT = 1521
MAX_BATCH = 4 << 20
"""The largest message a standby accepts."""
