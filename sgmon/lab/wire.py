"""Redo shipping between the lab's log writer and its standby receiver.

A message is a header (kind, sequence, length) and the redo; the standby answers each with the
sequence once the redo is on its standby log (SYNC AFFIRM).  A SWITCH message asks the standby to
switch standby logs, as a primary log switch does.
"""

from __future__ import annotations

import struct

HEAD = struct.Struct("!BQI")
ACK = struct.Struct("!Q")
REDO, SWITCH = 1, 2
PORT = 1521
