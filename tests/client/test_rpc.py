"""The request/response API on response channels (docs/api.md, "Request/response"): many clients on one
server, cancellation and timeouts that forget a request (its late answer dropped and counted), a server
restart survived by the client, the bound on concurrent handlers, back pressure, the sync API. Every async
body runs on asyncio, uvloop and trio."""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator, Callable

import anyio
import pytest

import aeron_async
from aeron_async import AsyncRpcClient, AsyncRpcServer, RpcClient, RpcServer
from conftest import free_udp_port

# short terms: 50 clients are 100 logs
REQUESTS = "aeron:ipc?term-length=64k"
RESPONSES = "aeron:ipc?control-mode=response|term-length=64k"
STREAM = 7100

pytestmark = pytest.mark.anyio


def server(aeron: aeron_async.AsyncAeron, **kwargs: object) -> AsyncRpcServer:
    return AsyncRpcServer(aeron, REQUESTS, STREAM, response_channel=RESPONSES, **kwargs)  # type: ignore[arg-type]


def client(aeron: aeron_async.AsyncAeron, **kwargs: object) -> AsyncRpcClient:
    return AsyncRpcClient(aeron, REQUESTS, STREAM, response_channel=RESPONSES, **kwargs)  # type: ignore[arg-type]


async def upper(data: bytes) -> bytes:
    return data.upper()


async def until(predicate: Callable[[], object], what: str, timeout: float = 10.0) -> None:
    with anyio.move_on_after(timeout):
        while not predicate():
            await anyio.sleep(0.001)
        return
    raise AssertionError(f"no {what} within {timeout} s")


@pytest.fixture
async def aeron(driver: aeron_async.MediaDriver) -> AsyncIterator[aeron_async.AsyncAeron]:
    async with aeron_async.connect(driver.aeron_dir) as connected:
        yield connected


async def test_fifty_clients_on_one_server(aeron: aeron_async.AsyncAeron) -> None:
    async with server(aeron) as srv, anyio.create_task_group() as serving:
        serving.start_soon(srv.serve, upper)
        answers: dict[tuple[int, int], bytes] = {}

        async def one_client(c: int) -> None:
            async with client(aeron) as cli, anyio.create_task_group() as requests:
                async def ask(r: int) -> None:
                    answers[(c, r)] = await cli.request(f"client {c} request {r}".encode(), timeout=20)
                for r in range(3):
                    requests.start_soon(ask, r)

        async with anyio.create_task_group() as clients:
            for c in range(50):
                clients.start_soon(one_client, c)
        assert answers == {(c, r): f"CLIENT {c} REQUEST {r}".encode() for c in range(50) for r in range(3)}
        assert srv.requests_received == 150 and srv.dropped_responses == 0
        serving.cancel_scope.cancel()


async def test_a_cancelled_request_never_gets_a_late_answer(aeron: aeron_async.AsyncAeron) -> None:
    release = anyio.Event()

    async def held(data: bytes) -> bytes:
        if data == b"slow":
            await release.wait()
        return b"re:" + data

    async with server(aeron) as srv, anyio.create_task_group() as serving, client(aeron) as cli:
        serving.start_soon(srv.serve, held)
        with anyio.CancelScope() as scope:
            async def cancel_once_taken() -> None:
                await until(lambda: srv.outstanding == 1, "the slow request taken")
                scope.cancel()
            serving.start_soon(cancel_once_taken)
            await cli.request(b"slow", timeout=20)
        assert scope.cancelled_caught and cli.in_flight == 0
        release.set()
        await until(lambda: cli.late_replies == 1, "the late answer dropped")
        # the next request gets its own answer, not the forgotten one's
        assert await cli.request(b"next", timeout=20) == b"re:next"
        assert cli.late_replies == 1
        serving.cancel_scope.cancel()


async def test_timeout_forgets_the_request(aeron: aeron_async.AsyncAeron) -> None:
    release = anyio.Event()

    async def held(data: bytes) -> bytes:
        await release.wait()
        return data

    async with server(aeron) as srv, anyio.create_task_group() as serving, client(aeron) as cli:
        serving.start_soon(srv.serve, held)
        await cli.wait_connected(timeout=20)
        with pytest.raises(aeron_async.RequestTimeoutError, match="no answer to request 1 within 0.2 s"):
            await cli.request(b"never", timeout=0.2)
        assert isinstance(aeron_async.RequestTimeoutError("x"), TimeoutError)
        release.set()
        await until(lambda: cli.late_replies == 1, "the late answer dropped")
        assert await cli.request(b"now", timeout=20) == b"now"
        serving.cancel_scope.cancel()


async def test_no_server_times_out_clearly(aeron: aeron_async.AsyncAeron) -> None:
    async with client(aeron) as cli:
        with pytest.raises(aeron_async.RequestTimeoutError, match="not connected to a server on aeron:ipc"):
            await cli.request(b"anyone?", timeout=0.2)


async def test_handler_errors_reach_the_client(aeron: aeron_async.AsyncAeron) -> None:
    async def broken(data: bytes) -> bytes:
        raise ValueError(f"cannot take {data!r}")

    async with server(aeron) as srv, anyio.create_task_group() as serving, client(aeron) as cli:
        serving.start_soon(srv.serve, broken)
        with pytest.raises(aeron_async.RemoteError, match=r"ValueError: cannot take b'x'"):
            await cli.request(b"x", timeout=20)
        serving.cancel_scope.cancel()


@pytest.mark.parametrize("retry", [True, False], ids=["retry", "no-retry"])
async def test_server_restart_is_survived(aeron: aeron_async.AsyncAeron, retry: bool) -> None:
    """A request in flight when the server stops is sent again to the restarted server (or fails with
    ServerUnavailableError without retry); a request sent during the outage waits for the new server."""
    taken = anyio.Event()

    async def first(data: bytes) -> bytes:
        if data == b"in flight":
            taken.set()
            await anyio.sleep_forever()
        return b"first:" + data

    async def second(data: bytes) -> bytes:
        return b"second:" + data

    outcomes: dict[str, object] = {}
    async with client(aeron, retry=retry) as cli, anyio.create_task_group() as tasks:
        async def ask(data: bytes) -> None:
            try:
                outcomes[data.decode()] = await cli.request(data, timeout=30)
            except aeron_async.ServerUnavailableError as exc:
                outcomes[data.decode()] = exc

        async with server(aeron) as srv, anyio.create_task_group() as serving:
            serving.start_soon(srv.serve, first)
            assert await cli.request(b"before", timeout=20) == b"first:before"
            tasks.start_soon(ask, b"in flight")
            await taken.wait()
            serving.cancel_scope.cancel()
        # the first server is gone: the client sees its image go away
        await until(lambda: not cli.is_connected, "the client to see the server gone")
        tasks.start_soon(ask, b"during the outage")
        await until(lambda: cli.in_flight == (2 if retry else 1) and (retry or "in flight" in outcomes),
                    "the requests to wait")
        async with server(aeron) as srv2, anyio.create_task_group() as serving:
            serving.start_soon(srv2.serve, second)
            await until(lambda: len(outcomes) == 2, "both requests answered")
            assert await cli.request(b"after", timeout=20) == b"second:after"
            serving.cancel_scope.cancel()
    assert outcomes["during the outage"] == b"second:during the outage"
    if retry:
        assert outcomes["in flight"] == b"second:in flight"
    else:
        assert isinstance(outcomes["in flight"], aeron_async.ServerUnavailableError)
    assert cli.connections == 2


async def test_handlers_run_concurrently_within_the_bound(aeron: aeron_async.AsyncAeron) -> None:
    release = anyio.Event()
    running = 0
    most = 0

    async def held(data: bytes) -> bytes:
        nonlocal running, most
        running += 1
        most = max(most, running)
        await release.wait()
        running -= 1
        return data

    async with server(aeron, max_concurrent=4) as srv, anyio.create_task_group() as serving, \
            client(aeron) as cli:
        serving.start_soon(srv.serve, held)
        answers: list[bytes] = []

        async def ask(i: int) -> None:
            answers.append(await cli.request(str(i).encode(), timeout=30))

        async with anyio.create_task_group() as requests:
            for i in range(12):
                requests.start_soon(ask, i)
            await until(lambda: running == 4, "4 handlers running")
            # every request is at the server, yet no fifth is taken while four are unanswered
            for _ in range(50):
                await anyio.sleep(0.001)
            assert running == 4 and srv.outstanding == 4 and srv.requests_received == 4
            release.set()
        assert sorted(answers) == sorted(str(i).encode() for i in range(12))
        assert most == 4
        serving.cancel_scope.cancel()


async def test_back_pressure_bounds_requests_in_flight_and_offers(aeron: aeron_async.AsyncAeron) -> None:
    """A client holds at most max_in_flight requests; past the request log's window its offers wait
    (back pressure) rather than fail, and every request is answered once the server reads again."""
    release = anyio.Event()

    async def held(data: bytes) -> bytes:
        await release.wait()
        return data[:4]

    big = bytes(4000)
    async with server(aeron, max_concurrent=1) as srv, anyio.create_task_group() as serving, \
            client(aeron, max_in_flight=40) as cli:
        serving.start_soon(srv.serve, held)
        await cli.wait_connected(timeout=20)
        answers: list[bytes] = []

        async def ask(i: int) -> None:
            answers.append(await cli.request(i.to_bytes(4, "little") + big, timeout=30))

        async with anyio.create_task_group() as requests:
            for i in range(60):
                requests.start_soon(ask, i)
            await until(lambda: cli.in_flight == 40 and srv.outstanding == 1, "the bound reached")
            # a 64 KiB term holds a window of 32 KiB: only a few 4 KB requests fit, the rest wait to be offered
            publication = cli._publication
            assert publication is not None and publication.position < 40 * len(big)
            release.set()
        assert sorted(answers) == [i.to_bytes(4, "little") for i in range(60)]
        assert cli.in_flight == 0
        serving.cancel_scope.cancel()


def test_sync_api(driver: aeron_async.MediaDriver) -> None:
    # a client per thread: the server's thread and the requesting one
    with aeron_async.Aeron.connect(driver.aeron_dir) as aeron, aeron_async.Aeron.connect(driver.aeron_dir) as other:
        def handler(data: bytes) -> bytes:
            if data == b"boom":
                raise RuntimeError("no")
            return data[::-1]

        srv = RpcServer(other, REQUESTS, STREAM, response_channel=RESPONSES)
        stop = threading.Event()
        thread = threading.Thread(target=srv.serve, args=(handler, stop.is_set))
        thread.start()
        try:
            with RpcClient(aeron, REQUESTS, STREAM, response_channel=RESPONSES) as cli:
                assert [cli.request(f"abc{i}".encode(), timeout=20) for i in range(100)] == \
                    [f"abc{i}"[::-1].encode() for i in range(100)]
                with pytest.raises(aeron_async.RemoteError, match="RuntimeError: no"):
                    cli.request(b"boom", timeout=20)
                assert cli.request(b"ok", timeout=20) == b"ko"
        finally:
            stop.set()
            thread.join(10)
            srv.close()
        assert srv.requests_received == 102


def test_sync_client_times_out_without_a_server(client: aeron_async.Aeron) -> None:
    with RpcClient(client, REQUESTS, STREAM, response_channel=RESPONSES) as cli:
        with pytest.raises(aeron_async.RequestTimeoutError, match="not connected to a server"):
            cli.request(b"x", timeout=0.2)


def test_channels_are_checked(client: aeron_async.Aeron) -> None:
    with pytest.raises(aeron_async.InvalidArgumentError, match="give response_channel="):
        RpcClient(client, "aeron:udp?endpoint=127.0.0.1:40000", STREAM)
    with pytest.raises(aeron_async.InvalidArgumentError, match="must not name control-mode=response"):
        RpcClient(client, "aeron:ipc?control-mode=response", STREAM)


async def test_over_udp(udp_driver: aeron_async.MediaDriver) -> None:
    """The same API over UDP: the answers go where each client's packets came from (response channels)."""
    request_channel = f"aeron:udp?endpoint=127.0.0.1:{free_udp_port()}"
    response_channel = f"aeron:udp?control-mode=response|control=127.0.0.1:{free_udp_port()}"
    async with aeron_async.connect(udp_driver.aeron_dir) as aeron, \
            AsyncRpcServer(aeron, request_channel, STREAM, response_channel=response_channel) as srv, \
            anyio.create_task_group() as serving:
        serving.start_soon(srv.serve, upper)
        async with AsyncRpcClient(aeron, request_channel, STREAM, response_channel=response_channel) as one, \
                AsyncRpcClient(aeron, request_channel, STREAM, response_channel=response_channel) as two:
            assert await one.request(b"one", timeout=20) == b"ONE"
            assert await two.request(b"two", timeout=20) == b"TWO"
        assert srv.dropped_responses == 0
        serving.cancel_scope.cancel()
