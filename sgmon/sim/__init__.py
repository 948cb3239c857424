"""The simulated Data Guard pair (``sgmon demo``, ``--simulate``, the analysis tests).

``SCENARIOS`` names the conditions (name -> one line); ``SimPair(scenario, seed, interval, start,
onset).step()`` returns the (primary, standby) frames of the next interval, with the OS
collectors' rows and the oracle_* rows produced by the real database collectors running their
SQL against the SQLite stand-in (``sgmon.sim.standin``, reusable by the lab).  The fault of a
scenario begins ``onset`` simulated seconds after the start.  The primary also carries
``oracle_trace`` (its LGWR and NSS traces and the standby's RFS trace, written by the model into a
private temporary directory and read by the real trace reader); ``schema(host)`` says which
collectors each host has.  ``SimPair.close()`` removes the stand-ins and the trace directory.
"""

from __future__ import annotations

from sgmon.sim.pair import SimPair
from sgmon.sim.scenarios import SCENARIOS

__all__ = ["SCENARIOS", "SimPair"]
