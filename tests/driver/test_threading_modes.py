"""Every threading mode moves messages; INVOKER runs the duty cycle on the caller's thread."""

from __future__ import annotations

import os
import socket
import threading

import pytest

import aeron_async
from conftest import TEST_DRIVER_SETTINGS, offer_all, wait_for


def native_thread_names() -> list[str]:
    names = []
    for task in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{task}/comm") as f:
                names.append(f.read().strip())
        except OSError:
            pass
    return names


DRIVER_THREADS = {
    "DEDICATED": ["aeron-conductor", "aeron-receiver", "aeron-sender"],
    "SHARED_NETWORK": ["aeron-conductor", "aeron-network"],
    "SHARED": ["aeron-shared"],
}


def udp_channel() -> str:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return f"aeron:udp?endpoint=127.0.0.1:{sock.getsockname()[1]}|term-length=1m"


@pytest.mark.parametrize("media", ["ipc", "udp"])
@pytest.mark.parametrize("mode", ["DEDICATED", "SHARED_NETWORK", "SHARED"])
def test_threaded_modes(aeron_dir: str, mode: str, media: str) -> None:
    settings = dict(TEST_DRIVER_SETTINGS, threading_mode=mode)
    with aeron_async.MediaDriver.launch(aeron_dir=aeron_dir, **settings) as driver, \
            aeron_async.Aeron.connect(driver.aeron_dir) as client:
        names = {t.name for t in threading.enumerate()}
        assert "aeron-conductor" not in names  # native threads are not Python threads
        # each runner names its thread as it starts
        wait_for(lambda: sorted(n for n in native_thread_names() if n.startswith("aeron-") and n != "aeron-client")
                 == DRIVER_THREADS[mode], timeout=5, what=f"driver threads {DRIVER_THREADS[mode]}")
        channel = "aeron:ipc" if media == "ipc" else udp_channel()
        sub = client.add_subscription(channel, 1)
        pub = client.add_publication(channel, 1)
        wait_for(lambda: pub.is_connected)
        for i in range(1000):
            offer_all(pub, i.to_bytes(4, "little"))
        got: list[int] = []
        wait_for(lambda: got.extend(int.from_bytes(m.data, "little") for m in sub.poll_messages()) or len(got) >= 1000)
        assert got == list(range(1000))


def test_invoker_mode_driver_and_client(aeron_dir: str) -> None:
    settings = dict(TEST_DRIVER_SETTINGS, threading_mode="INVOKER")
    with aeron_async.MediaDriver.launch(aeron_dir=aeron_dir, **settings) as driver:
        driver.do_work()
        with aeron_async.Aeron.connect(driver.aeron_dir, use_conductor_invoker=True) as client:
            reg = client.async_add_subscription("aeron:ipc", 2)
            sub = None
            for _ in range(10_000):
                driver.do_work()
                client.do_work()
                sub = client.poll_add_subscription(reg)
                if sub is not None:
                    break
            assert sub is not None
            reg = client.async_add_publication("aeron:ipc", 2)
            pub = None
            for _ in range(10_000):
                driver.do_work()
                pub = client.poll_add_publication(reg)
                if pub is not None:
                    break
            assert pub is not None
            # nothing moves the publisher limit unless the driver's duty cycle is invoked
            for _ in range(100):
                driver.do_work()
                client.do_work()
            assert pub.offer(b"invoked") > 0
            got: list[bytes] = []
            for _ in range(1000):
                driver.do_work()
                got.extend(m.data for m in sub.poll_messages())
                if got:
                    break
            assert got == [b"invoked"]
        driver.do_work()
    with pytest.raises(aeron_async.ClosedError):
        driver.do_work()
