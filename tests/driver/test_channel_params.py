"""Every channel parameter is applied or refused with a reason (docs/configuration.md, "Channel
parameters"): the table there is `aeron-async driver --help-channel-params --markdown`, and the
driver does what the table says, on every kind of channel, for each parameter."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator

import pytest

import aeron_async
from aeron_async.channel_params import ROLES, channel_params
from conftest import REPO, TEST_DRIVER_SETTINGS, free_udp_port

# A value of each parameter that is valid on its own (the checks of values are tests/driver and
# _native/tests/test_uri_parse.c's; here only whether the driver takes the parameter matters).
SAMPLE = {
    "term-length": "64k", "mtu": "1408", "session-id": "4321", "linger": "100ms", "sparse": "true",
    "eos": "true", "tether": "false", "alias": "x", "pub-wnd": "32k", "interface": "127.0.0.1", "rcv-wnd": "64k",
    "so-sndbuf": "64k", "so-rcvbuf": "128k", "nak-delay": "1ms", "reliable": "false", "fc": "max", "cc": "static",
    "ats": "true", "rejoin": "false", "group": "true", "ssc": "true", "spies-simulate-connection": "true",
    "tags": "7", "untethered-window-limit-timeout": "1s", "untethered-resting-timeout": "1s",
    "untethered-linger-timeout": "1s", "stream-id": "3", "response-correlation-id": "5",
    "response-endpoint": "127.0.0.1:1", "channel-rcv-ts-offset": "0", "channel-snd-ts-offset": "0",
    "media-rcv-ts-offset": "0", "gtag": "5",
    "init-term-id": "0|term-id=0|term-offset=0", "term-id": "0|init-term-id=0|term-offset=0",
    "term-offset": "0|init-term-id=0|term-id=0",
}
# Applied only in some forms of a role (multicast or multi-destination channels, combinations of
# addresses, a response subscription made first): tests/media/test_mdc.py, tests/media/test_multicast.py
# and tests/media/test_response_channels.py check them.
IN_SOME_FORMS = {"endpoint", "control", "control-mode", "ttl", "max-resend", "response-correlation-id"}
ACCEPTED = ("applied", "other end", "ignored (as Aeron)")


def test_the_docs_table_is_generated_from_the_drivers_table() -> None:
    result = subprocess.run([sys.executable, "-m", "aeron_async", "driver", "--help-channel-params", "--markdown"],
                            capture_output=True, text=True, timeout=60,
                            env=dict(os.environ, PYTHONPATH=os.pathsep.join(
                                p for p in (os.environ.get("PYTHONPATH"), REPO) if p)))
    assert result.returncode == 0, result.stderr
    with open(os.path.join(REPO, "docs", "configuration.md")) as f:
        docs = f.read()
    assert result.stdout.strip() in docs, \
        "docs/configuration.md's channel parameter table is out of date: paste in its new output"


@pytest.fixture
def client(aeron_dir: str) -> Iterator[aeron_async.Aeron]:
    with aeron_async.MediaDriver.launch(aeron_dir=aeron_dir, **dict(TEST_DRIVER_SETTINGS, term_buffer_length="64k")) \
            as driver, aeron_async.Aeron.connect(driver.aeron_dir, driver_timeout=5.0) as c:
        yield c


def _add(client: aeron_async.Aeron, role: str, param: str, value: str, stream: int) -> None:
    """Adds a publication or subscription of the role with param=value, and closes it."""
    extra = f"{param}={value}"
    if role.startswith("aeron:ipc"):
        channel = f"aeron:ipc?{extra}"
    else:
        channel = f"aeron:udp?endpoint=127.0.0.1:{free_udp_port()}|{extra}"
        if role.startswith("aeron-spy"):
            channel = "aeron-spy:" + channel
    if role.endswith("publication"):
        client.add_exclusive_publication(channel, stream).close()
    else:
        client.add_subscription(channel, stream).close()


def _reason(why: str, role: str) -> str:
    """The reason the table gives for refusing a parameter in a role: the row's own, or the one of
    its "<role>: <reason>" parts (the spy's is labelled "spy")."""
    label = "spy" if role.startswith("aeron-spy") else role
    for part in why.split("; "):
        if part.startswith(label + ": "):
            return part[len(label) + 2:]
    return why


def test_the_driver_does_what_the_table_says(client: aeron_async.Aeron) -> None:
    params = channel_params()
    assert {p.name for p in params} >= set(SAMPLE) | IN_SOME_FORMS
    stream = 100
    for p in params:
        if p.name in IN_SOME_FORMS:
            continue
        for role, status in zip(ROLES, p.status):
            stream += 1
            what = f"{p.name}={SAMPLE[p.name]} on an {role} ({status})"
            if status in ACCEPTED:
                try:
                    _add(client, role, p.name, SAMPLE[p.name], stream)
                except aeron_async.InvalidChannelError as exc:
                    pytest.fail(f"{what} was refused: {exc}")
                continue
            with pytest.raises(aeron_async.InvalidChannelError) as refused:
                _add(client, role, p.name, SAMPLE[p.name], stream)
            message = str(refused.value)
            assert f"{p.name}" in message, (what, message)
            if status == "not of the media":
                assert f"unknown parameter '{p.name}'" in message, (what, message)
            elif status.startswith("only "):
                allowed = status.split()[1]
                assert SAMPLE[p.name] != allowed, what
                _add(client, role, p.name, allowed, stream)     # what the driver does anyway: accepted
            else:
                assert status == "refused" and p.why is not None, what
                assert _reason(p.why, role) in message, (what, message)
