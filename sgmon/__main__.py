"""`python -m sgmon`: the same entry point as the `sgmon` script."""

from sgmon.cli import main

raise SystemExit(main())
