"""Replay-merge: catch up on a recording from the archive, then switch to the live stream it
records, without a gap or a duplicate (Aeron's ReplayMerge).

The subscription is a multi-destination subscription (`aeron:udp?control-mode=manual`): the
replay and the live stream arrive as one image, because the replay is sent with the live
stream's session id, initial term id, term length and MTU (the recording's), so its positions are
the live stream's. The image takes each position once, from whichever transport brings it first.

Steps (Aeron's states): add the replay destination (port 0: the port it bound, as the
subscription's local socket addresses report it); ask the archive how far the recording has got
(the target); replay from `position` to the replay destination, unbounded; once the image reaches
the target, ask again; when it is within a window of the target (a quarter term, at most 32 MiB)
add the live destination; once the image has reached the target asked for after that, remove the
replay destination and stop the replay: MERGED. The image's position not moving for
`progress_timeout` seconds fails the merge (ArchiveError).

Unlike Aeron's ReplayMerge, which drops the replay only when the image reports two active
transports, this client has no per-transport count, so it drops the replay once the image has
caught up with the recording position read after the live destination was added: a live frame that
arrived after that is received on the live transport, and any gap between them is recovered from
the live publication by NAK, since the image asks every transport its frames came on.
"""

from __future__ import annotations

import enum
import re
import time

from .._closing import ClosedOnExit
from ..client import Image, Message, Subscription
from ..errors import ArchiveError, InvalidArgumentError
from ..idle import IdleStrategy
from . import _channels
from .client import AeronArchive

MAX_WINDOW = 32 << 20
DEFAULT_PROGRESS_TIMEOUT = 5.0
_ENDPOINT = re.compile(r"endpoint=([^|]+)")


class MergeState(enum.Enum):
    RESOLVE_REPLAY_PORT = "resolve replay port"
    GET_RECORDING_POSITION = "get recording position"
    REPLAY = "replay"
    CATCHUP = "catch up"
    ATTEMPT_LIVE_JOIN = "attempt live join"
    MERGED = "merged"
    FAILED = "failed"
    CLOSED = "closed"


def check_merge_channels(subscription_channel: str, replay_destination: str, live_destination: str) -> None:
    if "control-mode=manual" not in subscription_channel:
        raise InvalidArgumentError(
            f"replay_merge needs a multi-destination subscription: subscribe to 'aeron:udp?control-mode=manual' "
            f"(got {subscription_channel!r})")
    for what, channel in (("replay_destination", replay_destination), ("live_destination", live_destination)):
        if not channel.startswith("aeron:udp?") or "endpoint=" not in channel:
            raise InvalidArgumentError(f"{what} {channel!r} must be a UDP destination such as 'aeron:udp?endpoint=host:port'")


def replay_channel_for(replay_destination: str, resolved_endpoint: str, session_id: int) -> str:
    """The channel the archive replays to: the replay destination's (resolved) endpoint, with the
    recording's session id so the replay joins the live stream's image."""
    return f"aeron:udp?endpoint={resolved_endpoint}|session-id={session_id}"


def destination_endpoint(destination: str) -> str:
    endpoint = _ENDPOINT.search(destination)
    assert endpoint is not None  # check_merge_channels made sure
    return endpoint.group(1)


def bound_port(addresses: list[str], before: set[str], host_port: str) -> str:
    """The replay destination's address once the subscription reports the port it bound for port
    0 (its rcv-local-sockaddr counter), else `host_port` unchanged."""
    fresh = [address for address in addresses if address not in before]
    return fresh[0] if fresh else host_port


def merge_window(term_length: int) -> int:
    return min(term_length >> 2, MAX_WINDOW)


class ReplayMerge(ClosedOnExit):
    """Merge a recording's replay into its live stream on `subscription` (synchronous).

    Call `poll_messages()` in your loop: it does the next step of the merge and returns the
    messages received meanwhile (the replayed ones first, then live ones, each position once).
    `is_merged` turns True when the replay has been dropped; from then on it is an ordinary live
    subscription. `close()` stops the replay if it still runs.
    """

    def __init__(
        self, archive: AeronArchive, subscription: Subscription, channel: str, recording_id: int, *,
        replay_destination: str, live_destination: str, position: int | None = None,
        progress_timeout: float = DEFAULT_PROGRESS_TIMEOUT, owns_subscription: bool = False,
    ) -> None:
        check_merge_channels(channel, replay_destination, live_destination)
        self._owns_subscription = owns_subscription
        self.archive = archive
        self.subscription = subscription
        self.recording_id = _channels.check_int(recording_id, "recording_id", 0)
        self.replay_destination = replay_destination
        self.live_destination = live_destination
        descriptor = archive.list_recording(recording_id)
        self.descriptor = descriptor
        self.position = descriptor.start_position if position is None else _channels.check_int(position, "position", 0)
        self.window = merge_window(descriptor.term_buffer_length)
        self.progress_timeout = progress_timeout
        self.state = MergeState.RESOLVE_REPLAY_PORT
        self.replay_session_id: int | None = None
        self.image: Image | None = None
        self._target = -1
        self._live_added = False
        self._replay_added = False
        self._last_position = -1
        self._last_progress = time.monotonic()
        self._idle = IdleStrategy("backoff")
        self._replay_channel = ""

    @property
    def is_merged(self) -> bool:
        return self.state == MergeState.MERGED

    def _fail(self, why: str) -> ArchiveError:
        self.state = MergeState.FAILED
        self._stop_replay()
        return ArchiveError(f"replay_merge of recording {self.recording_id}: {why}")

    def _resolve(self) -> None:
        before = set(self.subscription.local_socket_addresses)
        self.subscription.add_destination(self.replay_destination)
        self._replay_added = True
        host_port = destination_endpoint(self.replay_destination)
        if host_port.endswith(":0"):
            deadline = time.monotonic() + self.archive.timeout
            while (host_port := bound_port(self.subscription.local_socket_addresses, before, host_port)).endswith(":0"):
                if time.monotonic() > deadline:
                    raise self._fail(f"the port replay destination {self.replay_destination} bound was not reported "
                                     f"within {self.archive.timeout} s; give a fixed port")
                time.sleep(0.001)
        self._replay_channel = replay_channel_for(self.replay_destination, host_port, self.descriptor.session_id)
        self.state = MergeState.GET_RECORDING_POSITION

    def _recording_position(self) -> int:
        position = self.archive.recording_position(self.recording_id)
        if position is None:
            stop = self.archive.stop_position(self.recording_id)
            raise self._fail(f"the recording has stopped (at {stop}): there is no live stream to merge with; "
                             "replay it instead")
        return position

    def _find_image(self) -> Image | None:
        if self.image is None:
            self.image = self.subscription.image_by_session_id(self.descriptor.session_id)
        return self.image

    def do_work(self) -> int:
        """One step of the merge; returns 1 when the state changed."""
        state = self.state
        if state == MergeState.RESOLVE_REPLAY_PORT:
            self._resolve()
        elif state == MergeState.GET_RECORDING_POSITION:
            self._target = self._recording_position()
            self.state = MergeState.REPLAY
        elif state == MergeState.REPLAY:
            self.replay_session_id = self.archive.start_replay(
                self.recording_id, self.position, _channels.MAX_LENGTH, channel=self._replay_channel,
                stream_id=self.descriptor.stream_id, _merge=True)
            self._last_progress = time.monotonic()
            self.state = MergeState.CATCHUP
        elif state == MergeState.CATCHUP:
            image = self._find_image()
            if image is not None and image.position >= self._target:
                self._target = self._recording_position()
                self.state = MergeState.ATTEMPT_LIVE_JOIN
        elif state == MergeState.ATTEMPT_LIVE_JOIN:
            image = self._find_image()
            assert image is not None
            if not self._live_added:
                if image.position + self.window >= self._target:
                    self.subscription.add_destination(self.live_destination)
                    self._live_added = True
                    self._target = self._recording_position()
                else:
                    self._target = self._recording_position()
            elif image.position >= self._target:
                self.subscription.remove_destination(self.replay_destination)
                self._replay_added = False
                self._stop_replay()
                self.state = MergeState.MERGED
        else:
            return 0
        self._check_progress()
        return 1 if self.state != state else 0

    def _check_progress(self) -> None:
        if self.state in (MergeState.MERGED, MergeState.FAILED, MergeState.CLOSED):
            return
        image = self.image
        position = image.position if image is not None else -1
        now = time.monotonic()
        if position != self._last_position:
            self._last_position = position
            self._last_progress = now
        elif now - self._last_progress > self.progress_timeout:
            raise self._fail(f"no progress for {self.progress_timeout} s in state {self.state.value} (image position "
                             f"{position}, target {self._target})")

    def poll_messages(self, max_messages: int = 1024) -> list[Message]:
        """Do the next step of the merge and return the messages that arrived."""
        if self.state not in (MergeState.MERGED, MergeState.FAILED, MergeState.CLOSED):
            self.do_work()
        return self.subscription.poll_messages(max_messages)

    def _stop_replay(self) -> None:
        replay_session_id, self.replay_session_id = self.replay_session_id, None
        if replay_session_id is not None and not self.archive.is_closed:
            self.archive._stop_replay_quietly(replay_session_id)

    def close(self) -> None:
        if self.state != MergeState.MERGED:
            self._stop_replay()
            if self._replay_added and not self.subscription.is_closed:
                try:
                    self.subscription.remove_destination(self.replay_destination)
                except ArchiveError:
                    pass
        self.state = MergeState.CLOSED
        if self._owns_subscription:
            self.subscription.close()


__all__ = ["MergeState", "ReplayMerge"]
