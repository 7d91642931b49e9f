"""Multicast settings that need no network: the driver's multicast options (docs/configuration.md),
validated when the driver starts. Streams over groups are in test_multicast_netns.py."""

from __future__ import annotations

import pytest

import aeron_async
from aeron_async.context import native_options
from conftest import TEST_DRIVER_SETTINGS


@pytest.mark.parametrize("settings, fragments", [
    ({"max_resend": 0}, ["AERON_MAX_RESEND=0", "from 1 to 256"]),
    ({"max_resend": 257}, ["AERON_MAX_RESEND=257", "from 1 to 256"]),
    ({"nak_multicast_group_size": 0}, ["AERON_NAK_MULTICAST_GROUP_SIZE=0", "at least 1"]),
    ({"nak_multicast_max_backoff": 0}, ["AERON_NAK_MULTICAST_MAX_BACKOFF", "must be positive"]),
    ({"multicast_flow_control_strategy": ""}, ["AERON_MULTICAST_FLOW_CONTROL_STRATEGY is empty", "e.g. max"]),
])
def test_bad_multicast_driver_options_are_refused(aeron_dir: str, settings: dict[str, object], fragments: list[str]) -> None:
    with pytest.raises(aeron_async.ConfigurationError) as info:
        aeron_async.MediaDriver.launch(aeron_dir=aeron_dir, **{**TEST_DRIVER_SETTINGS, **settings}).close()
    for fragment in fragments:
        assert fragment in str(info.value), str(info.value)


def test_an_unknown_multicast_default_is_refused_when_the_driver_starts(aeron_dir: str) -> None:
    with pytest.raises(aeron_async.ConfigurationError) as info:
        aeron_async.MediaDriver.launch(aeron_dir=aeron_dir, multicast_flow_control_strategy="fastest",
                                       **TEST_DRIVER_SETTINGS).close()
    message = str(info.value)
    assert "AERON_MULTICAST_FLOW_CONTROL_STRATEGY=fastest" in message, message
    assert "unknown flow control 'fastest'" in message and "max" in message, message


def test_the_multicast_defaults_match_the_reference() -> None:
    """Reference 11: NAK delays below 10 ms shaped for 10 receivers, 16 resends at once, max flow
    control (the native option table, which DriverContext reads too)."""
    native = {env: default for env, _, default, _ in native_options()}
    expected = {"AERON_NAK_MULTICAST_MAX_BACKOFF": "10ms", "AERON_NAK_MULTICAST_GROUP_SIZE": "10",
                "AERON_MAX_RESEND": "16", "AERON_MULTICAST_FLOW_CONTROL_STRATEGY": "max",
                "AERON_SOCKET_MULTICAST_TTL": "0"}
    assert {env: native[env] for env in expected} == expected
