"""Response channels exactly as Aeron's (docs/architecture.md, "Response channels"): a client's response
subscription (control-mode=response) learns its session from the server's RSP_SETUP, the server's response
publication learns the client's address from the client's first status message; over UDP between two drivers,
over IPC on one, 50 clients on one server, the prototype that keeps the send endpoint, and every error text."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import anyio
import pytest

import aeron_async
from aeron_async.monitor import CncReader
from conftest import UDP_SETTINGS, counters_by_label, free_udp_port, new_aeron_dir, system_counter, wait_for

STREAM_REQUEST = 10000
STREAM_RESPONSE = 10001


@pytest.fixture
def two_drivers() -> Iterator[tuple[aeron_async.Aeron, aeron_async.Aeron, str, str]]:
    """(server client, client client, server dir, client dir): two drivers on loopback."""
    server_dir, client_dir = new_aeron_dir(), new_aeron_dir()
    with aeron_async.MediaDriver.launch(aeron_dir=server_dir, **UDP_SETTINGS), \
            aeron_async.MediaDriver.launch(aeron_dir=client_dir, **UDP_SETTINGS), \
            aeron_async.Aeron.connect(server_dir, driver_timeout=5.0) as server, \
            aeron_async.Aeron.connect(client_dir, driver_timeout=5.0) as client:
        yield server, client, server_dir, client_dir


def received(sub: aeron_async.Subscription, count: int = 1, timeout: float = 10.0) -> list[bytes]:
    got: list[bytes] = []
    wait_for(lambda: got.extend(m.data for m in sub.poll_messages()) or len(got) >= count, timeout=timeout,
             what=f"{count} messages on stream {sub.stream_id}")
    return got


def offer(pub: aeron_async.Publication, data: bytes) -> None:
    wait_for(lambda: pub.offer(data) > 0, timeout=10, what=f"an offer on stream {pub.stream_id}")


class UdpServer:
    """The server of reference wave3 1.5: one request subscription, a response publication per request image."""

    def __init__(self, aeron: aeron_async.Aeron, request_port: int, response_port: int, prototype: bool = False) -> None:
        self.aeron = aeron
        self.response_channel = f"aeron:udp?control-mode=response|control=127.0.0.1:{response_port}"
        self.requests = aeron.add_subscription(f"aeron:udp?endpoint=127.0.0.1:{request_port}", STREAM_REQUEST)
        self.prototype = aeron.add_exclusive_publication(
            f"{self.response_channel}|response-correlation-id=prototype", STREAM_RESPONSE) if prototype else None
        self.responses: dict[int, aeron_async.Publication] = {}   # by the request image's session

    def accept(self, count: int = 1) -> None:
        """A response publication for each new request image (its correlation id in the channel)."""
        def new_images() -> bool:
            for image in self.requests.images:
                if image.session_id not in self.responses:
                    self.responses[image.session_id] = self.aeron.add_publication(
                        f"{self.response_channel}|response-correlation-id={image.correlation_id}", STREAM_RESPONSE)
            return len(self.responses) >= count
        wait_for(new_images, timeout=10, what=f"{count} request images")

    def answer(self) -> int:
        """Echoes every request with b're:' on the response publication of its session; returns how many."""
        answered = 0
        for message in self.requests.poll_messages():
            offer(self.responses[message.session_id], b"re:" + bytes(message.data))
            answered += 1
        return answered


def udp_client(aeron: aeron_async.Aeron, request_port: int, response_port: int
               ) -> tuple[aeron_async.Subscription, aeron_async.Publication]:
    response = aeron.add_subscription(
        f"aeron:udp?control-mode=response|control=127.0.0.1:{response_port}", STREAM_RESPONSE)
    request = aeron.add_exclusive_publication(
        f"aeron:udp?endpoint=127.0.0.1:{request_port}|response-correlation-id={response.registration_id}",
        STREAM_REQUEST)
    return response, request


def test_udp_request_and_response_between_two_drivers(two_drivers: tuple) -> None:
    server_aeron, client_aeron, server_dir, client_dir = two_drivers
    request_port, response_port = free_udp_port(), free_udp_port()
    server = UdpServer(server_aeron, request_port, response_port)
    response, request = udp_client(client_aeron, request_port, response_port)
    server.accept(1)
    wait_for(lambda: response.is_connected and request.is_connected, timeout=10, what="the client's image and request")
    # the response subscription took the session of the server's response publication, and only it
    (pub,) = server.responses.values()
    assert [image.session_id for image in response.images] == [pub.session_id]
    offer(request, b"ping")
    wait_for(lambda: server.answer(), timeout=10, what="the request")
    assert received(response) == [b"re:ping"]
    assert system_counter(client_dir, "Response setups refused, not from a receiver") == 0


def test_response_subscription_matches_nothing_until_it_learns_its_session(client: aeron_async.Aeron) -> None:
    """A publication of the response stream that is no response to this client never reaches it."""
    response = client.add_subscription("aeron:ipc?control-mode=response", STREAM_RESPONSE)
    plain = client.add_subscription("aeron:ipc", STREAM_RESPONSE)
    stray = client.add_publication("aeron:ipc", STREAM_RESPONSE)
    wait_for(lambda: plain.images, timeout=5, what="the plain subscription's image")
    offer(stray, b"not for you")
    assert received(plain) == [b"not for you"]
    assert response.images == []


def test_ipc_request_and_response_on_one_driver(client: aeron_async.Aeron) -> None:
    requests = client.add_subscription("aeron:ipc", STREAM_REQUEST)
    response = client.add_subscription("aeron:ipc?control-mode=response", STREAM_RESPONSE)
    request = client.add_exclusive_publication(
        f"aeron:ipc?response-correlation-id={response.registration_id}", STREAM_REQUEST)
    image = wait_for(lambda: requests.images, timeout=5, what="the request image")[0]
    assert image.correlation_id == request.registration_id
    assert response.images == []   # matches nothing before the response publication
    answer = client.add_publication(
        f"aeron:ipc?control-mode=response|response-correlation-id={image.correlation_id}", STREAM_RESPONSE)
    wait_for(lambda: response.is_connected and answer.is_connected, timeout=5, what="the response image")
    assert [i.session_id for i in response.images] == [answer.session_id]
    offer(request, b"ping")
    (asked,) = received(requests)
    offer(answer, b"re:" + asked)
    assert received(response) == [b"re:ping"]


def test_ipc_fifty_clients_on_one_server(client: aeron_async.Aeron) -> None:
    requests = client.add_subscription("aeron:ipc", STREAM_REQUEST)
    clients = []
    for _ in range(50):
        response = client.add_subscription("aeron:ipc?control-mode=response", STREAM_RESPONSE)
        request = client.add_exclusive_publication(
            f"aeron:ipc?response-correlation-id={response.registration_id}", STREAM_REQUEST)
        clients.append((response, request))
    wait_for(lambda: len(requests.images) == 50, timeout=10, what="50 request images")
    answers = {image.session_id: client.add_publication(
        f"aeron:ipc?control-mode=response|response-correlation-id={image.correlation_id}", STREAM_RESPONSE)
        for image in requests.images}
    assert len({pub.session_id for pub in answers.values()}) == 50   # one response publication each
    for i, (response, request) in enumerate(clients):
        wait_for(lambda: response.is_connected, timeout=5, what=f"client {i}'s response image")
        offer(request, str(i).encode())
    got = received(requests, 50)
    assert sorted(got) == sorted(str(i).encode() for i in range(50))
    asked: dict[int, bytes] = {}
    for i, (_, request) in enumerate(clients):
        asked[request.session_id] = str(i).encode()
    for session_id, pub in answers.items():
        offer(pub, b"re:" + asked[session_id])
    for i, (response, _) in enumerate(clients):
        assert received(response) == [b"re:" + str(i).encode()], f"client {i} got another's answer"


def test_udp_fifty_clients_on_one_server(two_drivers: tuple) -> None:
    server_aeron, client_aeron, _, _ = two_drivers
    request_port, response_port = free_udp_port(), free_udp_port()
    server = UdpServer(server_aeron, request_port, response_port)
    clients = [udp_client(client_aeron, request_port, response_port) for _ in range(50)]
    server.accept(50)
    for i, (response, request) in enumerate(clients):
        wait_for(lambda: response.is_connected and request.is_connected, timeout=10, what=f"client {i}")
        offer(request, str(i).encode())
    answered = 0

    def answer_all() -> bool:
        nonlocal answered
        answered += server.answer()
        return answered >= 50
    wait_for(answer_all, timeout=10, what="50 requests")
    for i, (response, _) in enumerate(clients):
        assert received(response) == [b"re:" + str(i).encode()], f"client {i} got another's answer"


def test_tagged_response_channels_share_their_endpoints_through_the_tags(two_drivers: tuple) -> None:
    """Tags (configuration.md, "Tags, aliases and timestamps") on every channel of the exchange: the second
    client's response subscription and request publication and the server's second response publication name
    only the tag, yet reach the endpoints of the first; requests with distinct response ids stay distinct
    publications on the one send endpoint."""
    server_aeron, client_aeron, server_dir, client_dir = two_drivers
    request_port, response_port = free_udp_port(), free_udp_port()
    requests = server_aeron.add_subscription(f"aeron:udp?endpoint=127.0.0.1:{request_port}", STREAM_REQUEST)
    subs = [client_aeron.add_subscription(f"aeron:udp?control-mode=response|control=127.0.0.1:{response_port}|tags=72",
                                          STREAM_RESPONSE),
            client_aeron.add_subscription("aeron:udp?control-mode=response|tags=72", STREAM_RESPONSE)]
    request_channels = [f"aeron:udp?endpoint=127.0.0.1:{request_port}|tags=73", "aeron:udp?tags=73"]
    clients = [(sub, client_aeron.add_publication(f"{channel}|response-correlation-id={sub.registration_id}",
                                                  STREAM_REQUEST)) for sub, channel in zip(subs, request_channels)]
    assert clients[0][1].session_id != clients[1][1].session_id
    images = wait_for(lambda: len(requests.images) == 2 and requests.images, timeout=10, what="2 request images")
    response_channels = [f"aeron:udp?control-mode=response|control=127.0.0.1:{response_port}|tags=71",
                         "aeron:udp?control-mode=response|tags=71"]
    answers = {image.session_id: server_aeron.add_publication(
        f"{channel}|response-correlation-id={image.correlation_id}", STREAM_RESPONSE)
        for image, channel in zip(images, response_channels)}
    for i, (response, request) in enumerate(clients):
        wait_for(lambda: response.is_connected, timeout=10, what=f"client {i}'s response image")
        offer(request, str(i).encode())
    got: dict[int, bytes] = {}
    wait_for(lambda: got.update((m.session_id, bytes(m.data)) for m in requests.poll_messages()) or len(got) == 2,
             timeout=10, what="2 requests")
    for session_id, data in got.items():
        offer(answers[session_id], b"re:" + data)
    for i, (response, _) in enumerate(clients):
        assert received(response) == [b"re:" + str(i).encode()], f"client {i} got another's answer"
    # one socket each: the server's on control=, the client's response and request endpoints
    assert [label.endswith(f"127.0.0.1:{response_port}") for label in counters_by_label(server_dir)
            if label.startswith("snd-local-sockaddr:")] == [True]
    client_labels = counters_by_label(client_dir)
    for name in ("rcv-local-sockaddr:", "snd-local-sockaddr:"):
        assert len([label for label in client_labels if label.startswith(name)]) == 1, name


def bound(port: int) -> bool:
    """Whether a socket of this host holds 127.0.0.1:port (UDP)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return True
        return False


@pytest.mark.parametrize("prototype", [True, False], ids=["with-prototype", "without-prototype"])
def test_prototype_keeps_the_send_endpoint(two_drivers: tuple, prototype: bool) -> None:
    server_aeron, client_aeron, server_dir, _ = two_drivers
    request_port, response_port = free_udp_port(), free_udp_port()

    def send_sockets() -> set[int]:
        """The snd-local-sockaddr counters of the server's socket on control= (one per send endpoint)."""
        with CncReader(server_dir) as reader:
            return {c.id for c in reader.counters()
                    if c.label.startswith("snd-local-sockaddr:") and c.label.endswith(f"127.0.0.1:{response_port}")}

    server = UdpServer(server_aeron, request_port, response_port, prototype=prototype)
    if prototype:
        assert server.prototype is not None
        assert server.prototype.term_length == 64 * 1024   # reference wave3 1.4
        assert len(send_sockets()) == 1 and bound(response_port)
    response, _ = udp_client(client_aeron, request_port, response_port)
    server.accept(1)
    wait_for(lambda: response.is_connected, timeout=10, what="the response image")
    before = send_sockets()
    assert len(before) == 1
    (pub,) = server.responses.values()
    freed = f"snd-pos: {pub.registration_id} "
    pub.close()
    wait_for(lambda: not any(label.startswith(freed) for label in counters_by_label(server_dir)), timeout=10,
             what="the response publication freed")
    if prototype:
        # a later client is answered through the same send endpoint
        second, _ = udp_client(client_aeron, request_port, response_port)
        server.accept(2)
        wait_for(lambda: second.is_connected, timeout=10, what="the second client's response image")
        assert send_sockets() == before and bound(response_port)
    else:
        wait_for(lambda: not send_sockets() and not bound(response_port), timeout=10, what="the send endpoint closed")


def test_prototype_sends_nothing(udp_client: aeron_async.Aeron, udp_driver: aeron_async.MediaDriver) -> None:
    port = free_udp_port()
    pub = udp_client.add_exclusive_publication(
        f"aeron:udp?control-mode=response|control=127.0.0.1:{port}|response-correlation-id=prototype", STREAM_RESPONSE)
    assert pub.offer(b"to nobody") < 0   # never connected: it has no receiver to learn
    assert system_counter(udp_driver.aeron_dir, "Bytes sent") == 0


# ---- every error text of reference wave3 1.1, 1.2, 1.4 ----

def test_response_correlation_id_values(udp_client: aeron_async.Aeron) -> None:
    text = "invalid response-correlation-id, must be a number greater than or equal to -1, or 'prototype'"
    for value in ("-2", "abc", "1.5"):
        with pytest.raises(aeron_async.InvalidChannelError, match=text):
            udp_client.add_publication(f"aeron:ipc?response-correlation-id={value}", 1)
    udp_client.add_publication("aeron:ipc?response-correlation-id=-1", 1).close()


def test_request_needs_its_response_subscription(udp_client: aeron_async.Aeron) -> None:
    with pytest.raises(aeron_async.InvalidChannelError,
                       match="unable to find response subscription for response-correlation-id=987654"):
        udp_client.add_publication(f"aeron:udp?endpoint=127.0.0.1:{free_udp_port()}|response-correlation-id=987654", 1)
    # an IPC subscription is no network subscription
    ipc = udp_client.add_subscription("aeron:ipc?control-mode=response", 1)
    with pytest.raises(aeron_async.InvalidChannelError,
                       match=f"unable to find response subscription for response-correlation-id={ipc.registration_id}"):
        udp_client.add_publication(
            f"aeron:udp?endpoint=127.0.0.1:{free_udp_port()}|response-correlation-id={ipc.registration_id}", 1)


def test_response_publication_errors(two_drivers: tuple) -> None:
    server_aeron, client_aeron, _, _ = two_drivers
    control = f"aeron:udp?control-mode=response|control=127.0.0.1:{free_udp_port()}"
    with pytest.raises(aeron_async.InvalidChannelError,
                       match="control-mode=response was specified, but no response-correlation-id set"):
        server_aeron.add_publication(control, STREAM_RESPONSE)
    with pytest.raises(aeron_async.InvalidChannelError, match=r"image.correlationId=424242 not found"):
        server_aeron.add_publication(f"{control}|response-correlation-id=424242", STREAM_RESPONSE)
    # an image whose publication asked for no response channel
    port = free_udp_port()
    plain = server_aeron.add_subscription(f"aeron:udp?endpoint=127.0.0.1:{port}", STREAM_REQUEST)
    client_aeron.add_publication(f"aeron:udp?endpoint=127.0.0.1:{port}", STREAM_REQUEST)
    image = wait_for(lambda: plain.images, timeout=10, what="a plain image")[0]
    with pytest.raises(aeron_async.InvalidChannelError,
                       match=f"image.correlationId={image.correlation_id} did not request a response channel"):
        server_aeron.add_publication(f"{control}|response-correlation-id={image.correlation_id}", STREAM_RESPONSE)


@pytest.mark.parametrize("key", ["response-correlation-id=5", "mtu=1408", "rcv-wnd=128k", "so-rcvbuf=128k",
                                 "so-sndbuf=128k"])
def test_destination_keys(udp_client: aeron_async.Aeron, key: str) -> None:
    name = key.split("=")[0]
    pub = udp_client.add_publication("aeron:udp?control-mode=manual", 1)
    with pytest.raises(aeron_async.AeronError, match=f"destinations must not contain the key: {name}"):
        pub.add_destination(f"aeron:udp?endpoint=127.0.0.1:{free_udp_port()}|{key}")
    sub = udp_client.add_subscription("aeron:udp?control-mode=manual", 1)
    with pytest.raises(aeron_async.AeronError, match=f"destinations must not contain the key: {name}"):
        sub.add_destination(f"aeron:udp?endpoint=127.0.0.1:{free_udp_port()}|{key}")


def test_destination_control_mode_response(udp_client: aeron_async.Aeron) -> None:
    pub = udp_client.add_publication("aeron:udp?control-mode=manual", 1)
    with pytest.raises(aeron_async.AeronError, match="destinations may not specify control-mode=response"):
        pub.add_destination(f"aeron:udp?endpoint=127.0.0.1:{free_udp_port()}|control-mode=response")


def test_subscriptions_of_one_endpoint_agree_on_response_mode(udp_client: aeron_async.Aeron) -> None:
    channel = f"aeron:udp?endpoint=127.0.0.1:{free_udp_port()}|control=127.0.0.1:{free_udp_port()}"
    udp_client.add_subscription(f"{channel}|control-mode=response", 5)
    with pytest.raises(aeron_async.InvalidChannelError,
                       match="option conflicts with existing subscription: isResponse=false"):
        udp_client.add_subscription(channel, 5)


def test_control_port_zero_and_response_alone(udp_client: aeron_async.Aeron) -> None:
    with pytest.raises(aeron_async.InvalidChannelError, match="control has port=0 for subscription"):
        udp_client.add_subscription(f"aeron:udp?endpoint=127.0.0.1:{free_udp_port()}|control=127.0.0.1:0", 1)
    # control-mode=response alone is a valid UDP channel (an ephemeral port), and IPC takes it too
    udp_client.add_subscription("aeron:udp?control-mode=response", 1).close()
    udp_client.add_subscription("aeron:ipc?control-mode=response", 1).close()
    with pytest.raises(aeron_async.InvalidChannelError, match="aeron:ipc takes control-mode=response only"):
        udp_client.add_subscription("aeron:ipc?control-mode=dynamic", 1)


# ---- async: the same exchange through the async facade (asyncio, uvloop, trio) ----

@pytest.mark.anyio
async def test_async_ipc_request_and_response(driver: aeron_async.MediaDriver) -> None:
    async with aeron_async.connect(driver.aeron_dir) as aeron:
        requests = await aeron.add_subscription("aeron:ipc", STREAM_REQUEST)
        response = await aeron.add_subscription("aeron:ipc?control-mode=response", STREAM_RESPONSE)
        request = await aeron.add_exclusive_publication(
            f"aeron:ipc?response-correlation-id={response.registration_id}", STREAM_REQUEST)
        with anyio.fail_after(10):
            while not requests.images:
                await anyio.sleep(0.001)
            (view,) = await requests.image_views()
            assert view.correlation_id == request.registration_id
            answer = await aeron.add_publication(
                f"aeron:ipc?control-mode=response|response-correlation-id={view.correlation_id}", STREAM_RESPONSE)
            await request.send(b"ping")
            asked = await requests.receive()
            await answer.send(b"re:" + bytes(asked.data))
            assert bytes((await response.receive()).data) == b"re:ping"
