"""The `sgmon` command line.

Only the chosen subcommand's module is imported (``sgmon.commands.<name>``), so `sgmon status`
and `sgmon record` never pay for Textual, pyroute2 or oracledb.  Each command module provides
``add_arguments(parser)`` and ``run(args) -> int``.  Exit codes: 0 ok, 1 findings of warning
severity (check), 2 usage or config error, 3 a source could not be reached.  Every error a user
can cause is one line on stderr starting with ``sgmon:``.
"""

from __future__ import annotations

import errno
import sys
from importlib import import_module

from sgmon import __version__
from sgmon.errors import SinkFailed, Unreachable, UsageError

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (3 ms of every status)
if TYPE_CHECKING:
    import argparse
    from typing import Any, NoReturn, TextIO

COMMANDS: dict[str, str] = {
    "dashboard": "dashboard (Textual) for the configured hosts (the default)",
    "demo": "dashboard on the simulated primary/standby pair",
    "replay": "dashboard on a recording (or --summary / --at TIME)",
    "record": "headless CSV archive, for nohup, cron or systemd",
    "status": "one line for the tmux status bar",
    "agent": "NDJSON frames on stdout (what ssh runs on a remote host)",
    "serve": "Prometheus / OpenMetrics endpoint",
    "check": "one-shot findings report, exit code by severity; --symmetry: primary vs standby",
    "probe": "oratcptest-like SYNC/FastSync/ASYNC link test",
    "lab": "reproduce the published incidents between two network namespaces (root)",
    "config": "validate the config, show where each value came from",
    "collectors": "list the installed collectors and whether each can run here",
    "import": "sar, OSWatcher or AWR history into an archive (for replay, check --from)",
    "report": "a recording as one self-contained HTML incident report",
    "top": "plain-text live view of the local host (no Textual)",
    "discover": "Prometheus targets for a fleet, from the configs and the broker",
}
_MODULE = {"dashboard": "dashboard", "config": "configcmd", "import": "importcmd"}


def _parser() -> argparse.ArgumentParser:
    import argparse

    p = argparse.ArgumentParser(
        prog="sgmon",
        description="Live monitor for Oracle Data Guard SYNC redo transport.",
        epilog="commands:\n"
        + "\n".join(f"  {name:<11} {text}" for name, text in COMMANDS.items())
        + "\n\n`sgmon COMMAND --help` for each.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--version", action="version", version=f"sgmon {__version__}")
    return p


def _private_files() -> None:
    """Archives, state files, reports and imports are the user's alone (0600, directories 0700):
    the recorder's events and a report may name hosts and databases.  ``SGMON_UMASK`` (octal,
    e.g. 027) asks for other modes."""
    import os

    wanted = os.environ.get("SGMON_UMASK", "")
    try:
        mask = int(wanted, 8) & 0o777 if wanted else None
    except ValueError:
        mask = None
    current = os.umask(0o077)
    os.umask(mask if mask is not None else current | 0o077)


def _command_of(argv: list[str]) -> tuple[str, list[str]]:
    if argv and argv[0] in COMMANDS:
        return argv[0], argv[1:]
    if argv and not argv[0].startswith("-"):
        raise UsageError(f"unknown command {argv[0]!r}; commands: {', '.join(COMMANDS)}")
    return "dashboard", argv


class OutputLost(Exception):
    """Standard output cannot be written (a full device, a closed pipe, a hung-up terminal)."""

    def __init__(self, error: OSError) -> None:
        super().__init__(error.strerror or str(error))
        self.errno = error.errno


class _Guarded:
    """A standard stream whose write errors are the program's to decide, not a traceback's:
    on stdout the command ends with one line (``OutputLost``), on stderr the line is dropped
    (there is nowhere left to say it), and a recording goes on either way."""

    def __init__(self, stream: TextIO, fatal: bool) -> None:
        self._stream = stream
        self._fatal = fatal

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except OSError as e:
            self._lost(e)
            return len(text)

    def flush(self) -> None:
        try:
            self._stream.flush()
        except OSError as e:
            self._lost(e)

    def _lost(self, e: OSError) -> None:
        """Point the descriptor at /dev/null, so the interpreter's last flush cannot fail
        again, and raise on stdout."""
        import os

        try:
            fd = self._stream.fileno()
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, fd)
            os.close(null)
        except (OSError, ValueError):
            pass
        if self._fatal:
            raise OutputLost(e)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def _guard_streams() -> None:
    """Wrap stdout and stderr (see ``_Guarded``); the originals stay in sys.__stdout__ and
    sys.__stderr__ for whatever writes to the terminal itself (the dashboard)."""
    if not isinstance(sys.stdout, _Guarded) and sys.stdout is not None:
        sys.stdout = _Guarded(sys.stdout, fatal=True)  # type: ignore[assignment]
    if not isinstance(sys.stderr, _Guarded) and sys.stderr is not None:
        sys.stderr = _Guarded(sys.stderr, fatal=False)  # type: ignore[assignment]


def main(argv: list[str] | None = None) -> int:
    """Parse arguments, run one command, and map user errors to one line and an exit code."""
    argv = sys.argv[1:] if argv is None else argv
    _private_files()
    _guard_streams()
    try:
        code = _main(argv)
        sys.stdout.flush()
        return code
    except OutputLost as e:
        if e.errno == errno.EPIPE:  # `sgmon ... | head`: the reader had what it wanted
            return 0
        return _fail(f"cannot write the output: {e}", 1)


def _main(argv: list[str]) -> int:
    """``main`` inside the stream guard."""
    if argv[:1] == ["status"]:  # tmux runs it every few seconds: the short way, no argparse
        from sgmon import status

        fast = status.fast_args(argv[1:])
        if fast is not None:
            return status.main(*fast)
    if argv and argv[0] in ("-h", "--help", "--version"):
        _parser().parse_args(argv)
        return 0
    try:
        name, rest = _command_of(argv)
        module = import_module(f"sgmon.commands.{_MODULE.get(name, name)}")
        parser = _one_line_parser(prog=f"sgmon {name}", description=COMMANDS[name])
        module.add_arguments(parser)
        args = parser.parse_args(_west_offsets(rest))
        return int(module.run(args) or 0)
    except UsageError as e:
        return _fail(str(e), 2)
    except Unreachable as e:
        return _fail(str(e), 3)
    except SinkFailed as e:  # an output that could not go on (an import's archive deleted)
        return _fail(str(e), 1)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    except Exception as e:
        # Config errors (a ValueError) and value errors raised by parsers are user errors.
        if isinstance(e, ValueError):
            return _fail(str(e), 2)
        raise


def _west_offsets(argv: list[str]) -> list[str]:
    """``--tz -02:00`` as ``--tz=-02:00``: argparse takes a value that starts with a dash and is
    not a plain number for an option of its own, so a UTC offset west of Greenwich failed."""
    out: list[str] = []
    for arg in argv:
        if out and out[-1] == "--tz" and arg[:1] == "-" and arg[1:2].isdigit():
            out[-1] = f"--tz={arg}"
        else:
            out.append(arg)
    return out


def _fail(message: str, code: int) -> int:
    from sgmon.errors import one_line

    print(f"sgmon: {one_line(message)}", file=sys.stderr)
    return code


def _one_line_parser(prog: str, description: str) -> argparse.ArgumentParser:
    """An ArgumentParser (and its sub-parsers) whose errors are one ``sgmon:`` line, exit 2, not
    a usage block: the line names the option and points at ``--help``."""
    import argparse

    class Parser(argparse.ArgumentParser):
        def error(self, message: str) -> NoReturn:
            hint = ""
            if "expected one argument" in message:
                hint = " (a value that starts with '-' is written --option=VALUE)"
            raise UsageError(f"{self.prog}: {message}{hint}; see {self.prog} --help")

    return Parser(prog=prog, description=description)
