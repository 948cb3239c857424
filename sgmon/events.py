"""The wait events of the commit path, named once for the analysis, the screen and the status line.

Seed 000's commit chain (Table 4, 12.1 onward; Table 3 for 11.2's LNS names): the foreground
waits on ``log file sync`` while LGWR writes locally (``log file parallel write``) and, through
NSS, remotely (``SYNC Remote Write``, the network and the standby's ``RFS write``); ``Redo
Transport MISC`` is the rest of the remote leg.  The collectors' query lists
(``sgmon.oracle.queries``) hold every Data Guard event per version; these are the ones
sgmon reasons with.
"""

from __future__ import annotations

LOG_FILE_SYNC = "log file sync"
LOCAL_WRITE = "log file parallel write"
SYNC_REMOTE_WRITE = "SYNC Remote Write"
TRANSPORT_MISC = "Redo Transport MISC"
LNS_SENDREQ = "LNS wait on SENDREQ"
"""11.2's remote write (NSS's SYNC Remote Write from 12.1)."""
RFS_WRITE = "RFS write"
RFS_RANDOM = "RFS random i/o"
STANDBY_REDO_IO = "Standby redo I/O"

COMMIT_EVENTS = (LOG_FILE_SYNC, SYNC_REMOTE_WRITE, TRANSPORT_MISC, LNS_SENDREQ)
"""The primary's commit-path waits, log file sync first: outliers here are the symptom."""
REMOTE_WRITES = (SYNC_REMOTE_WRITE, LNS_SENDREQ)
STANDBY_WRITES = (RFS_WRITE, RFS_RANDOM)
GCS_LOG_FLUSH = "gcs log flush sync"
GC_BUSY = (
    "gc current block busy",
    "gc cr block busy",
    "gc buffer busy acquire",
    "gc buffer busy release",
)
"""RAC's wait for another instance's redo: before an instance's LMS ships a block whose redo is
not yet on disk (a current block with recent changes, or a CR copy built with undo), it asks its
own LGWR to flush and waits on ``gcs log flush sync``; the sessions of the instance that asked for
the block wait meanwhile on these gc busy events (seed 001's AWR: 'gcs log flush sync' 19.6 % of
the background time, the gc busy waits 40 % of the foregrounds')."""
SHOWN = (
    LOG_FILE_SYNC,
    LOCAL_WRITE,
    SYNC_REMOTE_WRITE,
    TRANSPORT_MISC,
    RFS_WRITE,
    RFS_RANDOM,
    STANDBY_REDO_IO,
)
"""Events the screen lists first and in this order, as the wait chain runs."""
SHORT = {LOG_FILE_SYNC: "lfs", SYNC_REMOTE_WRITE: "srw", RFS_WRITE: "rfs"}
"""Abbreviations of the status line and narrow panes."""
HEATMAP = (LOG_FILE_SYNC, SYNC_REMOTE_WRITE, RFS_WRITE)
"""The events whose histograms the heatmap draws: the symptom, its remote leg, the standby."""
