"""A scripted stand-in for an archive, for the client's unit tests: it reads the client's control
requests from the control stream over real IPC, decodes them by hand from the reference tables
(../shared/reference/aeron-archive-codecs.md, independently of the client's codec), and answers
with response bytes built by hand the same way, as a `script(request) -> [response bytes]`."""

from __future__ import annotations

import struct
import threading
import time
from collections.abc import Callable
from typing import Any

import aeron_async

SCHEMA = 101
VERSION = 14

# template id -> (name, struct format of the block, field names, var-field count)
REQUESTS: dict[int, tuple[str, str, tuple[str, ...], int]] = {
    3: ("CloseSession", "<q", ("controlSessionId",), 0),
    5: ("StopRecording", "<qqi", ("controlSessionId", "correlationId", "streamId"), 1),
    6: ("Replay", "<qqqqqiiq", ("controlSessionId", "correlationId", "recordingId", "position", "length",
                                "replayStreamId", "fileIoMaxLength", "replayToken"), 1),
    7: ("StopReplay", "<qqq", ("controlSessionId", "correlationId", "replaySessionId"), 0),
    8: ("ListRecordings", "<qqqi", ("controlSessionId", "correlationId", "fromRecordingId", "recordCount"), 0),
    9: ("ListRecordingsForUri", "<qqqii", ("controlSessionId", "correlationId", "fromRecordingId", "recordCount",
                                          "streamId"), 1),
    10: ("ListRecording", "<qqq", ("controlSessionId", "correlationId", "recordingId"), 0),
    12: ("RecordingPosition", "<qqq", ("controlSessionId", "correlationId", "recordingId"), 0),
    13: ("TruncateRecording", "<qqqq", ("controlSessionId", "correlationId", "recordingId", "position"), 0),
    14: ("StopRecordingSubscription", "<qqq", ("controlSessionId", "correlationId", "subscriptionId"), 0),
    15: ("StopPosition", "<qqq", ("controlSessionId", "correlationId", "recordingId"), 0),
    16: ("FindLastMatchingRecording", "<qqqii", ("controlSessionId", "correlationId", "minRecordingId", "sessionId",
                                               "streamId"), 1),
    17: ("ListRecordingSubscriptions", "<qqiiii", ("controlSessionId", "correlationId", "pseudoIndex",
                                                  "subscriptionCount", "applyStreamId", "streamId"), 1),
    18: ("BoundedReplay", "<qqqqqiiiq", ("controlSessionId", "correlationId", "recordingId", "position", "length",
                                        "limitCounterId", "replayStreamId", "fileIoMaxLength", "replayToken"), 1),
    19: ("StopAllReplays", "<qqq", ("controlSessionId", "correlationId", "recordingId"), 0),
    58: ("AuthConnect", "<qii", ("correlationId", "responseStreamId", "version"), 3),
    60: ("ChallengeResponse", "<qq", ("controlSessionId", "correlationId"), 1),
    61: ("KeepAlive", "<qq", ("controlSessionId", "correlationId"), 0),
    63: ("StartRecording2", "<qqiii", ("controlSessionId", "correlationId", "streamId", "sourceLocation",
                                      "autoStop"), 1),
    64: ("ExtendRecording2", "<qqqiii", ("controlSessionId", "correlationId", "recordingId", "streamId",
                                        "sourceLocation", "autoStop"), 1),
    65: ("StopRecordingByIdentity", "<qqq", ("controlSessionId", "correlationId", "recordingId"), 0),
    67: ("MaxRecordedPosition", "<qqq", ("controlSessionId", "correlationId", "recordingId"), 0),
    68: ("ArchiveId", "<qq", ("controlSessionId", "correlationId"), 0),
    104: ("PurgeRecording", "<qqq", ("controlSessionId", "correlationId", "recordingId"), 0),
}


def decode_request(data: bytes) -> dict[str, Any]:
    """A request as {"name", "template", field: value, ..., "var": [bytes, ...]}; asserts the header."""
    block_length, template, schema, version = struct.unpack_from("<HHHH", data, 0)
    assert schema == SCHEMA and version == VERSION, (schema, version)
    name, fmt, fields, var_count = REQUESTS[template]
    assert block_length == struct.calcsize(fmt), (name, block_length)
    out: dict[str, Any] = {"name": name, "template": template, "length": len(data)}
    out.update(zip(fields, struct.unpack_from(fmt, data, 8)))
    offset = 8 + block_length
    var = []
    for _ in range(var_count):
        (n,) = struct.unpack_from("<I", data, offset)
        var.append(bytes(data[offset + 4:offset + 4 + n]))
        offset += 4 + n
    assert offset == len(data), (name, offset, len(data))
    out["var"] = var
    return out


def _message(template: int, block: bytes, *var: bytes) -> bytes:
    out = struct.pack("<HHHH", len(block), template, SCHEMA, VERSION) + block
    for v in var:
        out += struct.pack("<I", len(v)) + v
    return out


def control_response(csid: int, corr: int, relevant: int, code: int, message: str = "") -> bytes:
    return _message(1, struct.pack("<qqqii", csid, corr, relevant, code, 0), message.encode())


def recording_descriptor(csid: int, corr: int, recording_id: int, *, start: int = 0, stop: int = -1,
                         stream_id: int = 10, session_id: int = 7, channel: str = "aeron:ipc") -> bytes:
    block = struct.pack("<qqqqqqqiiiiii", csid, corr, recording_id, 1_700_000_000_000, -1 if stop < 0 else 1_700_000_001_000,
                        start, stop, 5, 128 << 20, 1 << 20, 1408, session_id, stream_id)
    return _message(22, block, channel.encode(), channel.encode(), b"aeron:ipc")


def subscription_descriptor(csid: int, corr: int, subscription_id: int, stream_id: int, channel: str) -> bytes:
    return _message(23, struct.pack("<qqqi", csid, corr, subscription_id, stream_id), channel.encode())


def signal_event(csid: int, recording_id: int, subscription_id: int, position: int, signal: int) -> bytes:
    return _message(24, struct.pack("<qqqqqi", csid, -1, recording_id, subscription_id, position, signal))


def challenge(csid: int, corr: int, data: bytes) -> bytes:
    return _message(59, struct.pack("<qqi", csid, corr, 0), data)


Script = Callable[[dict[str, Any]], list[bytes]]


class FakeArchive:
    """Serves `script` on a thread: each decoded request (also kept in `requests`) is answered
    with the bytes the script returns, on the response channel the AuthConnect named."""

    CONTROL_SESSION_ID = 4242

    def __init__(self, client: aeron_async.Aeron, script: Script, control_channel: str = "aeron:ipc",
                 control_stream_id: int = 10) -> None:
        self.client = client
        self.script = script
        self.requests: list[dict[str, Any]] = []
        self.subscription = client.add_subscription(control_channel, control_stream_id)
        self.responses: aeron_async.Publication | None = None
        self._stop = threading.Event()
        self.error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def send(self, data: bytes) -> None:
        assert self.responses is not None
        deadline = time.monotonic() + 5
        while self.responses.offer(data) < 0:
            assert time.monotonic() < deadline, "fake archive: response not taken"
            time.sleep(0.0005)

    def _run(self) -> None:
        try:
            while not self._stop.is_set():
                messages = self.subscription.poll_messages()
                for message in messages:
                    request = decode_request(bytes(message.data))
                    self.requests.append(request)
                    if request["name"] == "AuthConnect":  # a new session: answer on its response channel
                        if self.responses is not None:
                            self.responses.close()
                        channel = request["var"][0].decode()
                        self.responses = self.client.add_publication(channel, request["responseStreamId"])
                        deadline = time.monotonic() + 5
                        while not self.responses.is_connected:
                            assert time.monotonic() < deadline, "fake archive: response stream not connected"
                            time.sleep(0.001)
                    for response in self.script(request):
                        self.send(response)
                if not messages:
                    time.sleep(0.0005)
        except BaseException as exc:  # surfaced by close()
            self.error = exc

    def names(self) -> list[str]:
        return [r["name"] for r in self.requests]

    def close(self) -> None:
        self._stop.set()
        self._thread.join(5)
        if self.responses is not None:
            self.responses.close()
        self.subscription.close()
        if self.error is not None:
            raise self.error


def accept(request: dict[str, Any]) -> list[bytes]:
    """The part of every script that accepts the AuthConnect and ignores keep-alives and closes."""
    if request["name"] == "AuthConnect":
        return [control_response(FakeArchive.CONTROL_SESSION_ID, request["correlationId"],
                                 FakeArchive.CONTROL_SESSION_ID, 0)]
    return []
