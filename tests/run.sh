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

exec .venv/bin/python -m pytest "$@"
