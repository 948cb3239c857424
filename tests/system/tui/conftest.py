"""Every dashboard test runs with a UTC clock and no user themes (``kits.tui.fixed_env``)."""

from kits.tui import fixed_env  # noqa: F401  (an autouse fixture, taken in by its name)
