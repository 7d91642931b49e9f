"""Every bad input gets a clear error naming what was wrong and how to fix it, and loses nothing
that was already published."""

from __future__ import annotations

import pytest

import aeron_async
from conftest import TEST_DRIVER_SETTINGS, new_aeron_dir, offer_all, wait_for


@pytest.mark.parametrize(
    "channel, fragments",
    [
        ("aeron:tcp?endpoint=localhost:40123", ["tcp", "ipc", "udp"]),
        ("ipc", ["aeron:"]),
        ("aeron:ipc?term-lenght=64k", ["term-lenght", "term-length"]),
        ("aeron:ipc?term-length", ["term-length", "="]),
        ("aeron:ipc?term-length=100000", ["100000", "power of two"]),
        ("aeron:ipc?term-length=lots", ["term-length", "lots"]),
        ("aeron:ipc?mtu=1000", ["mtu", "1000", "multiple of 32"]),
        ("aeron:ipc?sparse=maybe", ["sparse", "maybe", "true"]),
        ("aeron:ipc?init-term-id=5", ["init-term-id", "term-id", "term-offset"]),
    ],
)
def test_invalid_channel_uri(client: aeron_async.Aeron, channel: str, fragments: list[str]) -> None:
    with pytest.raises(aeron_async.InvalidChannelError) as info:
        client.add_publication(channel, 1)
    message = str(info.value)
    for fragment in fragments:
        assert fragment in message, message
    # the client is still usable
    assert client.add_publication("aeron:ipc", 1).stream_id == 1


def test_invalid_channel_for_subscription(client: aeron_async.Aeron) -> None:
    with pytest.raises(aeron_async.InvalidChannelError, match="tether"):
        client.add_subscription("aeron:ipc?tether=sometimes", 1)


def test_message_too_long_names_limit_and_loses_nothing(client: aeron_async.Aeron) -> None:
    sub = client.add_subscription("aeron:ipc?term-length=64k", 2)
    pub = client.add_publication("aeron:ipc?term-length=64k", 2)
    wait_for(lambda: pub.is_connected)
    offer_all(pub, b"before")
    with pytest.raises(aeron_async.MessageTooLongError) as info:
        pub.offer(bytes(pub.max_message_length + 1))
    assert str(pub.max_message_length) in str(info.value) and "term-length" in str(info.value)
    with pytest.raises(aeron_async.MessageTooLongError):
        pub.offer_vectors([bytes(pub.max_message_length), b"x"])
    offer_all(pub, bytes(pub.max_message_length))
    offer_all(pub, b"after")
    got: list[bytes] = []
    wait_for(lambda: got.extend(m.data for m in sub.poll_messages()) or len(got) >= 3)
    assert got == [b"before", bytes(pub.max_message_length), b"after"]


def test_term_length_not_power_of_two_in_driver_context(aeron_dir: str) -> None:
    with pytest.raises(aeron_async.ConfigurationError, match="power of two") as info:
        aeron_async.MediaDriver.launch(aeron_dir=aeron_dir, ipc_term_buffer_length=100_000)
    assert "AERON_IPC_TERM_BUFFER_LENGTH" in str(info.value)


def test_bad_driver_option_values(aeron_dir: str) -> None:
    with pytest.raises(aeron_async.ConfigurationError, match="threading mode"):
        aeron_async.MediaDriver.launch(aeron_dir=aeron_dir, threading_mode="PARALLEL")
    with pytest.raises(aeron_async.ConfigurationError, match="duration"):
        aeron_async.MediaDriver.launch(aeron_dir=aeron_dir, client_liveness_timeout="soon")
    with pytest.raises(aeron_async.ConfigurationError, match="idle"):
        aeron_async.MediaDriver.launch(aeron_dir=aeron_dir, shared_idle_strategy="napping")
    with pytest.raises(aeron_async.ConfigurationError, match="unknown driver option"):
        aeron_async.MediaDriver.launch(aeron_dir=aeron_dir, no_such_option=1)


def test_no_driver_at_directory() -> None:
    missing = new_aeron_dir()
    with pytest.raises(aeron_async.DriverNotFoundError) as info:
        aeron_async.Aeron.connect(missing, driver_timeout=1.0)
    message = str(info.value)
    assert missing in message and "aeron-async driver" in message and "MediaDriver.launch" in message


def test_use_after_close(driver: aeron_async.MediaDriver) -> None:
    client = aeron_async.Aeron.connect(driver.aeron_dir)
    sub = client.add_subscription("aeron:ipc", 3)
    pub = client.add_publication("aeron:ipc", 3)
    pub.close()
    with pytest.raises(aeron_async.ClosedError, match="closed"):
        pub.offer(b"x")
    sub.close()
    with pytest.raises(aeron_async.ClosedError, match="closed"):
        sub.poll(lambda d, h: None, 1)
    pub2 = client.add_publication("aeron:ipc", 3)
    client.close()
    with pytest.raises(aeron_async.ClosedError):
        pub2.offer(b"x")
    with pytest.raises(aeron_async.ClosedError, match="connect a new one"):
        client.add_publication("aeron:ipc", 3)
    client.close()  # idempotent


def test_environment_variables_configure_the_driver(monkeypatch: pytest.MonkeyPatch, aeron_dir: str) -> None:
    monkeypatch.setenv("AERON_IPC_TERM_BUFFER_LENGTH", "128k")
    with aeron_async.MediaDriver.launch(aeron_dir=aeron_dir, **{k: v for k, v in TEST_DRIVER_SETTINGS.items()
                                                                 if k != "ipc_term_buffer_length"}) as driver:
        with aeron_async.Aeron.connect(driver.aeron_dir) as client:
            pub = client.add_publication("aeron:ipc", 4)
            assert pub.term_length == 128 * 1024
            assert pub.max_message_length == 16 * 1024
    monkeypatch.setenv("AERON_IPC_TERM_BUFFER_LENGTH", "12345")
    with pytest.raises(aeron_async.ConfigurationError, match="power of two"):
        aeron_async.MediaDriver.launch(aeron_dir=aeron_dir)
