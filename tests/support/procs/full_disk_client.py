"""A client process of a driver and an archive whose filesystem the test fills
(tests/archive/test_full_filesystem.py): it maps their logs, so a SIGBUS there ends this process,
not the test. Reads one command a line on stdin and answers one JSON line on stdout:

  setup                  connect to the driver (argv[1]) and the archive, add the IPC publication P
  add_publication        add (and close) a new exclusive IPC publication
  requests N             N archive requests (archive_id) on the session opened by setup
  record                 record P and offer until the recording stops: its stop signal, or an error
  record_many            record the publications of setup's other streams, each on a channel with a
                         long alias (a large catalog entry), until one fails: how many started
  connect                open (and close) a new archive session
  quit

Each answer: {"ok": true, ...} or {"ok": false, "error": "<type>: <message>"}.
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any

import aeron_async
from aeron_async.archive import AeronArchive, RecordingSignal

CHANNEL = "aeron:ipc?term-length=64k"
STREAM = 4242
MANY = 10


def main() -> None:
    aeron_dir = sys.argv[1]
    state: dict[str, Any] = {}
    for line in sys.stdin:
        command, *args = line.split()
        try:
            answer = run(command, args, aeron_dir, state)
        except aeron_async.errors.AeronError as exc:
            answer = {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
        print(json.dumps(answer), flush=True)
        if command == "quit":
            break
    for name in ("archive", "aeron"):
        if name in state:
            state[name].close()


def run(command: str, args: list[str], aeron_dir: str, state: dict[str, Any]) -> dict[str, Any]:
    if command == "setup":
        aeron = state["aeron"] = aeron_async.Aeron.connect(aeron_dir)
        state["archive"] = AeronArchive.connect(aeron, timeout=10.0)
        state["publication"] = aeron.add_exclusive_publication(CHANNEL, STREAM)
        state["others"] = [aeron.add_exclusive_publication(CHANNEL, STREAM + 10 + i) for i in range(MANY)]
        return {"ok": True}
    if command == "add_publication":
        with state["aeron"].add_exclusive_publication(CHANNEL, STREAM + 1):
            return {"ok": True}
    if command == "requests":
        ids = {state["archive"].archive_id() for _ in range(int(args[0]))}
        return {"ok": True, "archive_ids": len(ids)}
    if command == "record":
        return record(state)
    if command == "record_many":
        return record_many(state)
    if command == "connect":
        with AeronArchive.connect(state["aeron"], timeout=3.0):
            return {"ok": True}
    if command == "quit":
        return {"ok": True}
    return {"ok": False, "error": f"unknown command {command}"}


def record(state: dict[str, Any]) -> dict[str, Any]:
    archive, publication = state["archive"], state["publication"]
    subscription_id = archive.start_recording(CHANNEL, STREAM)
    start = archive.wait_for_signal(RecordingSignal.START, subscription_id=subscription_id, timeout=10.0)
    payload = bytes(1000)
    deadline = time.monotonic() + 30.0
    while time.monotonic() < deadline:
        if publication.offer(payload) <= 0:
            time.sleep(0.0005)
        for event in archive.poll_for_recording_signals():
            if event.signal == RecordingSignal.STOP and event.recording_id == start.recording_id:
                return {"ok": True, "stopped": True, "recording_id": start.recording_id, "position": event.position}
    return {"ok": True, "stopped": False}


def record_many(state: dict[str, Any]) -> dict[str, Any]:
    archive = state["archive"]
    started = 0
    for i in range(MANY):
        channel = f"{CHANNEL}|alias={str(i) * 255}"
        try:
            subscription_id = archive.start_recording(channel, STREAM + 10 + i)
            archive.wait_for_signal(RecordingSignal.START, subscription_id=subscription_id, timeout=3.0)
        except aeron_async.errors.AeronError as exc:
            return {"ok": False, "started": started, "error": f"{type(exc).__name__}: {exc}"}
        started += 1
    return {"ok": True, "started": started}


if __name__ == "__main__":
    main()
