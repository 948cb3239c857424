"""Draw docs/screenshot.svg: `sgmon demo --scenario rto-stall` at 160x48, a minute into the fault.

The simulated pair is stepped here, not on a thread, so the same seed draws the same screen:
    python docs/make_screenshot.py [OUT]
tests/system/tui/test_readme_picture.py draws it again and fails when the README's is stale.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from sgmon.sim import SimPair
from sgmon.tui.app import SgmonApp

START = 1763712000.0  # a fixed clock: the screenshot does not change with the day it is drawn
OUT = Path(__file__).resolve().parent / "screenshot.svg"


async def main(out: Path = OUT) -> None:
    app = SgmonApp([], title="demo rto-stall", measure_self=False)
    pair = SimPair("rto-stall", seed=1, start=START, onset=40.0)
    async with app.run_test(size=(160, 48)) as pilot:
        for _ in range(100):
            primary, standby = pair.step()
            app.ingest(primary, pair.schema("primary"))
            app.ingest(standby, pair.schema("standby"))
        await pilot.pause(1.0)
        await pilot.resize_terminal(160, 48)  # lay the panes out again at their final size
        await pilot.pause(1.0)
        app.save_screenshot(out.name, str(out.parent))
    pair.close()
    print(f"wrote {out}")


if __name__ == "__main__":
    import sys

    asyncio.run(main(Path(sys.argv[1]) if len(sys.argv) > 1 else OUT))
