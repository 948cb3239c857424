"""What the unit and the system tests of topology share."""

from __future__ import annotations

import pytest

from sgmon.sim.standin import StandIn


@pytest.fixture
def primary():
    db = StandIn(role="PRIMARY", db_unique_name="PROD")
    yield db
    db.close()
