"""The readers under the collectors: /proc files, netlink, rtnetlink, inet_diag, tracefs.

They turn the kernel's own formats into Python values and grade nothing.  The collector plugins,
the simulation, the lab, the probe and the importers all read through them, so that a figure
means the same wherever it comes from.  Nothing here imports a collector or a command.
"""
