#!/usr/bin/env bash
# Everything the tests need, then the tests: Debian packages, a venv with the package and its
# test extras, and pytest.  This is the README's test command and what .ci/run calls.
set -euo pipefail
cd "$(dirname "$0")/.."

# prometheus brings the server the live test scrapes sgmon with, and promtool, which checks the
# shipped rules; libbpf-tools brings the biolatency the biolat collector runs; net-tools the
# netstat that OSWatcher runs (the osw import tests make archives with it); chromium opens the
# HTML report headless (tests/system/report/test_report_system.py), poppler-utils reads back what it
# prints to PDF
PKGS="iproute2 nftables sysstat tmux procps util-linux net-tools openssh-server openssh-client
  prometheus libbpf-tools chromium poppler-utils"
if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
missing=""
for p in $PKGS; do dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"; done
if [ -n "$missing" ]; then
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi

PY="${PYTHON:-python3}"
[ -x .venv/bin/python ] || "$PY" -m venv .venv
.venv/bin/pip install -q --upgrade pip >/dev/null
.venv/bin/pip install -q -e '.[test]'
# flush the install's dirty pages now, not under the lab's timed O_DSYNC redo writes
sync

# The two tiers, each with what suits it: the unit tier (in-process, tests/unit/conftest.py)
# across the CPUs with pytest-xdist, the system tier one test at a time (its tests share network
# namespaces, tmux servers and the machine's clock).  ARGS go to both (-x, -k, -m ...); ARGS that
# name tests (a path, path::test) run those alone, in one pytest, across the CPUs if they are
# all unit tests.  Either tier failing fails the run, and so does one that ran no test (pytest's
# exit 5), unless ARGS chose tests from the other tier only.
PYTEST=(.venv/bin/python -m pytest)
WORKERS=(-n auto)
named=0 unit_only=1
for a in "$@"; do
  case "$a" in -*) continue ;; esac
  if [ -e "${a%%::*}" ]; then
    named=1
    case "$(realpath -m --relative-to=. "${a%%::*}")/" in tests/unit/*) ;; *) unit_only=0 ;; esac
  fi
done
if [ "$named" = 1 ]; then
  [ "$unit_only" = 1 ] || WORKERS=()
  exec "${PYTEST[@]}" "${WORKERS[@]}" "$@"
fi

unit=0 system=0
"${PYTEST[@]}" "${WORKERS[@]}" tests/unit "$@" || unit=$?
"${PYTEST[@]}" tests/system "$@" || system=$?
for tier in unit system; do
  code=${!tier}
  [ "$code" = 0 ] && continue
  if [ "$code" = 5 ]; then
    [ $# -gt 0 ] && [ "$unit$system" != 55 ] && continue
    echo "tests/run.sh: the $tier tier ran no test (pytest exit 5)" >&2
  else
    echo "tests/run.sh: the $tier tier failed (pytest exit $code)" >&2
  fi
  exit "$code"
done
