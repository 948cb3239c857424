"""What the unit and the system tests of import awrtext share."""

from __future__ import annotations

from paths import DATA as TEST_DATA

DATA = TEST_DATA / "awr"


LNS = DATA / "awrrpt_11204_lns.txt"


SEED001 = DATA / "awrrpt_seed001.txt"
