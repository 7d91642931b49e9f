"""The Spark JVM connector's remote archive client (docs/security.md, "The Spark JVM connector")
authenticates as the Python client does: the credentials of its environment
(`AERON_ARCHIVE_CLIENT_CREDENTIALS`, else the file `AERON_ARCHIVE_CLIENT_CREDENTIALS_FILE` names,
held to the rule of every file of secrets), and a refusal or a challenge fails the connect in the
Python client's words. The native client runs in a JVM of its own (tests/support/java/RemoteProbe.java
over the connector's jar), since the suite's shared Spark JVM has one environment; each case is
compared with the Python client connecting under the same environment."""

from __future__ import annotations

import os
import pathlib
import subprocess
from collections.abc import Iterator
from typing import Any

import pytest

import aeron_async
from aeron_async.archive import AeronArchive
from aeron_async.errors import AeronError
from support.archive_e2e import archive_beside_driver, record, wait_recorded
from support.spark_fixtures import connector_jar
from conftest import new_aeron_dir, offer_all

ENTRIES = "reader:r34d:read\nadmin:s3cret:admin\n"
CHANNEL = "aeron:ipc"
STREAM = 7311
ENVIRONMENT = ("AERON_ARCHIVE_CLIENT_CREDENTIALS", "AERON_ARCHIVE_CLIENT_CREDENTIALS_FILE")
PROBE = pathlib.Path(__file__).parent.parent / "support" / "java" / "RemoteProbe.java"


@pytest.fixture(scope="module")
def probe(tmp_path_factory: Any) -> list[str]:
    """The command that runs RemoteProbe (compiled once against the connector's jar)."""
    from aeron_async.spark.jvm import build

    jar = connector_jar()
    classes = tmp_path_factory.mktemp("probe")
    home = build.java_home()
    subprocess.run([str(home / "bin" / "javac"), "-nowarn", "-d", str(classes), "-cp", jar, str(PROBE)], check=True,
                   timeout=120)
    return [str(home / "bin" / "java"), "-cp", f"{jar}{os.pathsep}{classes}", "RemoteProbe"]


def secret_file(directory: Any, name: str, content: str, mode: int) -> str:
    path = os.path.join(str(directory), name)
    with open(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode), "w") as out:
        out.write(content)
    os.chmod(path, mode)
    return path


@pytest.fixture(scope="module")
def guarded(tmp_path_factory: Any) -> Iterator[tuple[str, int]]:
    """An archive that lets in only `reader:r34d` and `admin:s3cret` (the credentials
    authenticator), holding one recording of STREAM (recorded by admin): (aeron dir, its id)."""
    files = tmp_path_factory.mktemp("auth")
    entries = secret_file(files, "entries", ENTRIES, 0o600)
    aeron_dir = new_aeron_dir()
    with archive_beside_driver(aeron_dir, str(files / "archive"), authenticator="credentials",
                               credentials_file=entries), \
            aeron_async.Aeron.connect(aeron_dir, driver_timeout=5.0) as client, \
            AeronArchive.connect(client, timeout=10.0, credentials=b"admin:s3cret") as archive:
        publication = client.add_exclusive_publication(CHANNEL, STREAM)
        _, recording_id = record(archive, CHANNEL, STREAM)
        end = 0
        for i in range(10):
            end = offer_all(publication, b"message %d" % i)
        wait_recorded(archive, recording_id, end)
        publication.close()
        yield aeron_dir, recording_id


def python_client(aeron_dir: str, environment: dict[str, str], monkeypatch: Any) -> str:
    """What the Python client says under `environment`: "OK <ids>" or "ERROR <message>"."""
    with monkeypatch.context() as patch:
        for name in ENVIRONMENT:
            patch.delenv(name, raising=False)
        for name, value in environment.items():
            patch.setenv(name, value)
        try:
            with aeron_async.Aeron.connect(aeron_dir, driver_timeout=5.0) as client, \
                    AeronArchive.connect(client, timeout=5.0) as archive:
                return "OK " + " ".join(str(d.recording_id) for d in archive.list_recordings(CHANNEL, STREAM))
        except AeronError as exc:
            return f"ERROR {exc}"


def jvm_client(probe: list[str], aeron_dir: str, environment: dict[str, str]) -> str:
    env = {name: value for name, value in os.environ.items() if name not in ENVIRONMENT}
    env.update(environment)
    done = subprocess.run([*probe, aeron_dir, "aeron:ipc?term-length=64k", "10", "aeron:ipc?term-length=64k", "20",
                           "5", CHANNEL, str(STREAM)], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def environment_of(case: str, directory: Any) -> dict[str, str]:
    if case == "variable":
        return {"AERON_ARCHIVE_CLIENT_CREDENTIALS": "reader:r34d"}
    if case == "file":
        return {"AERON_ARCHIVE_CLIENT_CREDENTIALS_FILE": secret_file(directory, "good", "reader:r34d\n", 0o600)}
    if case == "file, the variable empty":
        return {"AERON_ARCHIVE_CLIENT_CREDENTIALS": "",
                "AERON_ARCHIVE_CLIENT_CREDENTIALS_FILE": secret_file(directory, "good", "reader:r34d", 0o600)}
    if case == "wrong":
        return {"AERON_ARCHIVE_CLIENT_CREDENTIALS": "reader:wrong"}
    if case == "file readable by others":
        return {"AERON_ARCHIVE_CLIENT_CREDENTIALS_FILE": secret_file(directory, "open", "reader:r34d\n", 0o644)}
    return {}


@pytest.mark.parametrize("case, expected", [   # None: connected and listed the recording
    ("variable", None),
    ("file", None),
    ("file, the variable empty", None),
    ("wrong", "the archive's authenticator rejected the credentials"),
    ("none", "the archive's authenticator rejected the credentials"),
    ("file readable by others", "AERON_ARCHIVE_CLIENT_CREDENTIALS_FILE"),
])
def test_the_jvm_connects_with_the_environments_credentials_as_python_does(
        guarded: tuple[str, int], probe: list[str], monkeypatch: Any, tmp_path: Any, case: str,
        expected: str | None) -> None:
    aeron_dir, recording_id = guarded
    environment = environment_of(case, tmp_path)
    jvm = jvm_client(probe, aeron_dir, environment)
    python = python_client(aeron_dir, environment, monkeypatch)
    if expected is None:
        assert jvm == python == f"OK {recording_id}", (jvm, python)
        return
    assert jvm == python and jvm.startswith("ERROR ") and expected in jvm, (jvm, python)


def test_a_challenge_fails_the_jvms_connect_as_it_fails_pythons(probe: list[str], tmp_path: Any,
                                                                 monkeypatch: Any) -> None:
    """An archive whose authenticator challenges: neither client has a handler for it here."""
    aeron_dir = new_aeron_dir()
    with archive_beside_driver(aeron_dir, str(tmp_path / "archive"),
                               authenticator="python:support.archive_auth:ChallengeAuthenticator"):
        environment = {"AERON_ARCHIVE_CLIENT_CREDENTIALS": "alice"}
        jvm = jvm_client(probe, aeron_dir, environment)
        python = python_client(aeron_dir, environment, monkeypatch)
    expected = "ERROR connect: the archive challenged the credentials and no on_challenge handler was given"
    assert jvm == python and jvm.startswith(expected), (jvm, python)
