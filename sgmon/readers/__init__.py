"""The readers under the collectors: /proc files and processes, netlink, rtnetlink, inet_diag
(and the tcp_info it carries), socket owners, tracefs, Oracle trace lines and a standby's Data
Guard views.

They turn the kernel's and the database's own formats into Python values and grade nothing.  The
collector plugins, the simulation, the lab, the probe and the importers all read through them, so
that a figure means the same wherever it comes from.  Nothing here imports a collector or a
command, nor anything above the foundations (``sgmon.oracle`` included: what a reader needs of it,
such as the reading of a trace's timestamps, it is given).
"""
