"""The errors a user can cause, each printed by the CLI as one ``sgmon:`` line with its exit code.

Low and dependency-free, so that the importers, the TUI, the archive and the config can raise them
without importing the command line that catches them (``sgmon.cli.main``).
"""


class UsageError(Exception):
    """A user error in arguments or config: printed as one `sgmon:` line, exit 2."""


class Unreachable(Exception):
    """A source could not be reached: printed as one `sgmon:` line, exit 3."""


class ConfigError(ValueError):
    """A config problem (sgmon.toml or a collector option), as one line that says what to do:
    exit 2."""


class ArchiveError(Exception):
    """An archive problem as one line that says what to do."""


class SinkFailed(Exception):
    """An output that cannot go on (the archive directory deleted under the recorder): the run
    ends, the message is printed as one ``sgmon:`` line, exit 1."""
