"""One end of a response channel in a process of its own (tests/media/test_response_channels_netns.py),
with an embedded driver:

  response_peer.py server <aeron_dir> <server address> <request port> <response port>
      answers every request with b're:' + request on a response publication of its own, printing the
      source of each request image ("image <source identity>"), until stdin closes;
  response_peer.py client <aeron_dir> <server address> <request port> <response port> <local address>
      binds its sockets to <local address>, asks once and prints "answer <text>".
"""

from __future__ import annotations

import sys
import time

import aeron_async

REQUEST_STREAM, RESPONSE_STREAM = 10000, 10001
SETTINGS = {"threading_mode": "SHARED", "shared_idle_strategy": "backoff", "term_buffer_length": "64k",
            "publication_linger_timeout": 0.2, "dir_delete_on_shutdown": True}


def wait(predicate: object, what: str, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():  # type: ignore[operator]
        if time.monotonic() > deadline:
            print(f"timed out waiting for {what}", flush=True)
            sys.exit(1)
        time.sleep(0.001)


def server(aeron: aeron_async.Aeron, address: str, request_port: int, response_port: int) -> int:
    import selectors
    requests = aeron.add_subscription(f"aeron:udp?endpoint={address}:{request_port}", REQUEST_STREAM)
    responses: dict[int, aeron_async.Publication] = {}
    print("ready", flush=True)
    selector = selectors.DefaultSelector()
    selector.register(sys.stdin, selectors.EVENT_READ)
    while not selector.select(timeout=0):
        for image in requests.images:
            if image.session_id not in responses:
                print(f"image {image.source_identity}", flush=True)
                responses[image.session_id] = aeron.add_publication(
                    f"aeron:udp?control-mode=response|control={address}:{response_port}"
                    f"|response-correlation-id={image.correlation_id}", RESPONSE_STREAM)
        for message in requests.poll_messages():
            pub = responses[message.session_id]
            wait(lambda: pub.offer(b"re:" + bytes(message.data)) > 0, "the answer's offer")
        time.sleep(0.001)
    return 0


def client(aeron: aeron_async.Aeron, address: str, request_port: int, response_port: int, local: str) -> int:
    response = aeron.add_subscription(
        f"aeron:udp?control-mode=response|control={address}:{response_port}|endpoint={local}:0", RESPONSE_STREAM)
    request = aeron.add_exclusive_publication(
        f"aeron:udp?endpoint={address}:{request_port}|interface={local}"
        f"|response-correlation-id={response.registration_id}", REQUEST_STREAM)
    wait(lambda: response.is_connected and request.is_connected, "the response image and the request's receiver")
    wait(lambda: request.offer(b"ping") > 0, "the request's offer")
    got: list[bytes] = []
    wait(lambda: got.extend(bytes(m.data) for m in response.poll_messages()) or got, "the answer")
    print(f"answer {got[0].decode()}", flush=True)
    return 0


def main() -> int:
    role, aeron_dir, address, request_port, response_port = sys.argv[1:6]
    with aeron_async.MediaDriver.launch(aeron_dir=aeron_dir, **SETTINGS), \
            aeron_async.Aeron.connect(aeron_dir, driver_timeout=10) as aeron:
        if role == "server":
            return server(aeron, address, int(request_port), int(response_port))
        return client(aeron, address, int(request_port), int(response_port), sys.argv[6])


if __name__ == "__main__":
    sys.exit(main())
