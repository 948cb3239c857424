"""A host's role as the dashboard names it, from the same reading the analysis makes.

After a failover the old primary's frames (its database's last word, or its configured role)
still say primary while the new primary's database says so too; the analysis' topology takes
the one whose database is primary now, and its liveness finding calls the other the former
primary.  The header, the pane titles and the strip say the same, so one primary shows at every
moment."""

from __future__ import annotations

from sgmon.topology import Topology

FORMER_PRIMARY = "former primary"
"""The word for a host that says primary while the topology has another primary."""


def standing(name: str, role: str, topo: Topology | None) -> str:
    """``role`` (``sgmon.model.data_guard_role``'s reading), or ``former primary`` when it says
    primary and the topology's primary instances are others."""
    if role == "primary" and topo is not None and topo.primaries and name not in topo.primaries:
        return FORMER_PRIMARY
    return role
