"""fork(): a child process must not use the parent's client, publications, subscriptions, counters
or embedded driver (their threads exist only in the parent); it gets a clear UsedAfterForkError and
works with a client of its own (Spark's Python workers fork)."""

from __future__ import annotations

import json
import os
import signal
import time
import traceback
from collections.abc import Callable
from typing import Any

import pytest

import aeron_async
from conftest import offer_all, wait_for


def run_in_child(body: Callable[[], list[str]], timeout: float = 20.0) -> list[str]:
    """Fork, run `body` in the child (it returns a list of failures) and return what it reported.
    The child leaves with os._exit, so no parent cleanup (fixtures, atexit) runs there."""
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child
        os.close(read_fd)
        try:
            failures = body()
        except BaseException:  # noqa: BLE001 - everything goes back to the parent
            failures = ["child raised:\n" + traceback.format_exc()]
        with os.fdopen(write_fd, "w") as out:
            json.dump(failures, out)
        os._exit(0)
    os.close(write_fd)
    deadline = time.monotonic() + timeout
    try:
        while True:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                break
            if time.monotonic() > deadline:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                raise AssertionError(f"the forked child did not finish within {timeout} s")
            time.sleep(0.01)
        with os.fdopen(read_fd) as report:
            text = report.read()
    finally:
        try:
            os.close(read_fd)
        except OSError:
            pass
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, f"child ended with status {status}"
    assert text, "the child reported nothing"
    result: list[str] = json.loads(text)
    return result


def expect_fork_error(failures: list[str], name: str, call: Callable[[], Any]) -> None:
    try:
        call()
    except aeron_async.UsedAfterForkError as exc:
        message = str(exc)
        if "fork()" not in message or "create a new client in the child" not in message:
            failures.append(f"{name}: unclear message {message!r}")
        if str(os.getppid()) not in message:
            failures.append(f"{name}: message does not name the parent process: {message!r}")
    except BaseException as exc:  # noqa: BLE001
        failures.append(f"{name}: raised {type(exc).__name__}: {exc} instead of UsedAfterForkError")
    else:
        failures.append(f"{name}: did not raise")


def test_child_refuses_the_parents_objects_and_works_with_its_own_client(
    driver: aeron_async.MediaDriver, client: aeron_async.Aeron
) -> None:
    pub = client.add_publication("aeron:ipc", 31)
    exclusive = client.add_exclusive_publication("aeron:ipc", 32)
    sub = client.add_subscription("aeron:ipc", 31)
    wait_for(lambda: sub.images, timeout=5, what="image")
    image = sub.images[0]
    counter = client.add_counter(1001, b"", "parent's counter")
    offer_all(pub, b"before fork")
    wait_for(lambda: sub.poll_messages(), timeout=5, what="the first message")

    def child() -> list[str]:
        failures: list[str] = []
        expect_fork_error(failures, "offer", lambda: pub.offer(b"x"))
        expect_fork_error(failures, "offer_batch", lambda: pub.offer_batch([b"x", b"y"]))
        expect_fork_error(failures, "exclusive offer", lambda: exclusive.offer(b"x"))
        expect_fork_error(failures, "try_claim", lambda: pub.try_claim(8))
        expect_fork_error(failures, "position", lambda: pub.position)
        expect_fork_error(failures, "poll_messages", lambda: sub.poll_messages())
        expect_fork_error(failures, "poll", lambda: sub.poll(lambda data, header: None))
        expect_fork_error(failures, "images", lambda: sub.images)
        expect_fork_error(failures, "image position", lambda: image.position)
        expect_fork_error(failures, "image poll_messages", lambda: image.poll_messages())
        expect_fork_error(failures, "client_id", lambda: client.client_id)
        expect_fork_error(failures, "add_publication", lambda: client.add_publication("aeron:ipc", 33))
        expect_fork_error(failures, "add_subscription", lambda: client.add_subscription("aeron:ipc", 33))
        expect_fork_error(failures, "driver do_work", driver.do_work)
        expect_fork_error(failures, "counter increment", counter.increment)
        expect_fork_error(failures, "counter value", lambda: counter.value)
        expect_fork_error(failures, "add_counter", lambda: client.add_counter(1001, b"", "child"))
        # closing what the parent owns only forgets it here (and must not hang on the parent's threads)
        pub.close()
        sub.close()
        client.close()
        driver.close()
        if not (client.is_closed and pub.is_closed and sub.is_closed and driver.is_closed):
            failures.append("the parent's objects do not read as closed in the child")
        # a client of the child's own works against the parent's driver
        with aeron_async.Aeron.connect(driver.aeron_dir, driver_timeout=5.0) as own:
            own_pub = own.add_publication("aeron:ipc", 31)
            offer_all(own_pub, b"from the child")
            own_sub = own.add_subscription("aeron:ipc", 31)
            wait_for(lambda: own_sub.images, timeout=5, what="the child's image")
        return failures

    assert run_in_child(child) == []
    # the parent's objects were not disturbed: the child's message arrives and the parent offers on
    got: list[bytes] = []
    wait_for(lambda: got.extend(m.data for m in sub.poll_messages()) or b"from the child" in got, timeout=5,
             what="the child's message")
    offer_all(pub, b"after fork")
    wait_for(lambda: got.extend(m.data for m in sub.poll_messages()) or b"after fork" in got, timeout=5,
             what="the parent's message after the fork")
    assert client.client_id >= 0 and not client.is_closed and not driver.is_closed
    assert counter.increment() == 0 and not counter.is_closed


def test_fork_before_any_client_leaves_the_child_free_to_connect(driver: aeron_async.MediaDriver) -> None:
    def child() -> list[str]:
        with aeron_async.Aeron.connect(driver.aeron_dir, driver_timeout=5.0) as own:
            pub = own.add_publication("aeron:ipc", 34)
            sub = own.add_subscription("aeron:ipc", 34)
            offer_all(pub, b"ok")
            got = wait_for(lambda: sub.poll_messages(), timeout=5, what="message")
            return [] if got[0].data == b"ok" else [f"got {got!r}"]

    assert run_in_child(child) == []


@pytest.mark.anyio
async def test_async_objects_in_a_child_raise_used_after_fork(aeron_dir: str) -> None:
    from conftest import TEST_DRIVER_SETTINGS

    async with aeron_async.connect(aeron_dir, embedded_driver=True, **TEST_DRIVER_SETTINGS) as aclient:
        apub = await aclient.add_publication("aeron:ipc", 35)
        asub = await aclient.add_subscription("aeron:ipc", 35)
        await apub.offer(b"parent")
        assert (await asub.receive()).data == b"parent"

        def child() -> list[str]:
            failures: list[str] = []
            expect_fork_error(failures, "async offer_nowait", lambda: apub.offer_nowait(b"x"))
            expect_fork_error(failures, "async receive_nowait", asub.receive_nowait)
            expect_fork_error(failures, "async client_id", lambda: aclient.client_id)
            aclient.close()  # forgets the parent's client and driver; must not hang
            return failures

        assert run_in_child(child) == []
        await apub.offer(b"still works")
        assert (await asub.receive()).data == b"still works"
