"""The lab's third namespace (issue 15): joined to the primary's by a link of its own, and
removed with that link, the pair left as it was."""

from __future__ import annotations

import subprocess

import nslab
import pytest

from sgmon.lab import kernel

pytestmark = [pytest.mark.root]


def _namespaces() -> str:
    return subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout


def test_a_peer_namespace_joins_the_primary_on_its_own_subnet_and_goes_alone():
    nslab.require_lab()
    with nslab.ns_pair("kt") as pair:
        with kernel.ns_peer(pair, "kt") as peer:
            assert peer.a == pair.a and peer.b not in (pair.a, pair.b)
            assert peer.net != pair.net
            routes = pair.run("a", "ip", "-o", "route")
            assert f"{pair.net} dev {pair.a_if}" in routes
            assert f"{peer.net} dev {peer.a_if}" in routes
            assert peer.b in _namespaces()
        assert peer.b not in _namespaces()
        links = pair.run("a", "ip", "-o", "link")
        assert peer.a_if not in links and pair.a_if in links
        assert pair.a in _namespaces() and pair.b in _namespaces()
    assert pair.a not in _namespaces()
