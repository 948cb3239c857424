"""The simulated Data Guard pair (``sgmon demo``, ``--simulate``, the analysis tests).

``SCENARIOS`` names the conditions (name -> one line); ``SimPair(scenario, seed, interval, start,
onset).step()`` returns the (primary, standby) frames of the next interval (then those of a
scenario's further standbys, ``SimPair.hosts``), with the OS
collectors' rows and the oracle_* rows produced by the real database collectors running their
SQL against the SQLite stand-in (``sgmon.sim.standin``, reusable by the lab).  The fault of a
scenario begins ``onset`` simulated seconds after the start.  The primary also carries
``oracle_trace`` (its LGWR and NSS traces and the standby's RFS trace, written by the model into a
private temporary directory and read by the real trace reader; a switchover's standby has its own,
which its LGWR and NSS write once it is the primary); ``schema(host)`` says which collectors each
host has.  ``SimPair.close()`` removes the stand-ins and the trace directory.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sgmon.sim.scenarios import DEFAULT_ONSET, SCENARIOS

if TYPE_CHECKING:
    from sgmon.sim.pair import SimPair

__all__ = ["DEFAULT_ONSET", "SCENARIOS", "SimPair"]


def __getattr__(name: str) -> Any:
    """``SimPair`` on first use: the scenario names and defaults, which every command's argument
    checks read, must not pull in the stand-in database and the collectors."""
    if name == "SimPair":
        from sgmon.sim.pair import SimPair

        return SimPair
    raise AttributeError(name)
