"""The database collectors: ``oracle_waits``, ``oracle_redo``, ``oracle_dg``, ``oracle_trace``.

Options each collector reads (``Config.collector_options(name)`` plus what the host builder adds):

* ``db``: the host's ``sgmon.config.DbConfig`` (dsn, user, mode normal/sysdba/sysdg, password
  source, thick, extra ``events``, ``call_timeout``).  Without it (and without ``connect`` or
  ``session``) the collectors report themselves unavailable; they are not enabled by default.
* ``role``: the role the config gives the host ("primary"/"standby"); the role actually used is
  read from V$DATABASE at every connect.
* ``connect``: instead of ``db``, a zero-argument callable returning a DB-API connection (the
  SQLite stand-in of ``sgmon.sim.standin``, or a test double); the same SQL text runs on it.
* ``session``: an already made ``sgmon.oracle.session.Session`` to share (the simulation).
* ``clock``: epoch-seconds clock for event times (default ``time.time``).
* ``oracle_trace`` only: ``lgwr`` (path of the LGWR trace file), ``nss`` and ``rfs`` (event 16410
  traces of the primary's NSS and the standby's RFS), ``threshold_ms`` (default 100).

The host builder creates all four with the same ``db`` and ``role``; they then share one session
(one connection per database), whichever thread each runs on.
"""
