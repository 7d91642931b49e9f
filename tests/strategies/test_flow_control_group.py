"""Flow control with several receivers over multicast (docs/architecture.md, "Flow control with
receiver tracking"), one publishing host and receiving hosts on a bridge (network namespaces), a
standalone driver on each. The scenario bodies live in tests/support/fc_scenarios.py and take the strategy
(the fc= value) as an argument; here they run with the native strategies (the `min_fc`, `max_fc` and
`tagged_fc` fixtures name them, so another module can run the same bodies with strategies of its
own)."""

from __future__ import annotations

import pytest

import aeron_async
from aeron_async.bench import netns
from support import fc_scenarios

pytestmark = [pytest.mark.slow, pytest.mark.skipif(netns.available() is not None, reason=str(netns.available()))]

RECEIVER_TIMEOUT = "1s"


@pytest.fixture
def min_fc() -> str:
    return "min"


@pytest.fixture
def max_fc() -> str:
    return "max"


@pytest.fixture
def tagged_fc() -> str:
    return "tagged"


def test_min_a_slow_reader_holds_the_publisher_and_nothing_is_lost(min_fc: str) -> None:
    with fc_scenarios.group(3) as g:
        fc_scenarios.slow_reader_holds_the_publisher(g, min_fc)


def test_max_the_fastest_receiver_paces_the_publisher_and_the_slow_one_falls_behind(max_fc: str) -> None:
    with fc_scenarios.group(2) as g:
        fc_scenarios.fastest_receiver_paces_the_publisher(g, max_fc)


def test_tagged_only_the_tagged_receivers_pace_and_connect_the_publication(tagged_fc: str) -> None:
    with fc_scenarios.group(3) as g:
        fc_scenarios.tagged_receivers_hold_the_publisher(g, f"{tagged_fc},g:1001/2")


def test_tagged_a_killed_receiver_is_dropped_after_the_receiver_timeout(tagged_fc: str) -> None:
    with fc_scenarios.group(3) as g:
        fc_scenarios.killed_tagged_receiver_is_dropped(g, f"{tagged_fc},g:1001/2,t:{RECEIVER_TIMEOUT}", timeout=1.0)


def test_a_shared_multicast_publication_compares_fc_with_the_multicast_default() -> None:
    """Without fc= a multicast publication uses AERON_MULTICAST_FLOW_CONTROL_STRATEGY (max), so adding
    to one with fc=max is the same publication, and fc=min is refused naming both."""
    with fc_scenarios.group(0) as g:
        assert g.publisher_client is not None
        channel = g.channel(g.hosts[0])
        first = g.publisher_client.add_publication(f"{channel}|fc=max", 7)
        second = g.publisher_client.add_publication(channel, 7)
        assert second.session_id == first.session_id
        with pytest.raises(aeron_async.InvalidChannelError, match=r"fc=min differs from fc=max"):
            g.publisher_client.add_publication(f"{channel}|fc=min", 7)
