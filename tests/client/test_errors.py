"""Every bad input gets a clear error naming what was wrong and how to fix it, and loses nothing
that was already published."""

from __future__ import annotations

import argparse
import importlib
import io
import pathlib
import pkgutil
import struct
import types

import pytest

import aeron_async
from aeron_async import errors, extras
from aeron_async._ffi import ffi, lib
from aeron_async.archive import _codec
from conftest import TEST_DRIVER_SETTINGS, new_aeron_dir, offer_all, wait_for


@pytest.mark.parametrize(
    "channel, fragments",
    [
        ("aeron:tcp?endpoint=localhost:40123", ["tcp", "ipc", "udp"]),
        ("ipc", ["aeron:"]),
        ("aeron:ipc?term-lenght=64k", ["term-lenght", "term-length"]),
        ("aeron:ipc?term-length", ["term-length", "="]),
        ("aeron:ipc?term-length=100000", ["100000", "power of two"]),
        ("aeron:ipc?term-length=lots", ["term-length", "lots"]),
        ("aeron:ipc?mtu=1000", ["mtu", "1000", "multiple of 32"]),
        ("aeron:ipc?sparse=maybe", ["sparse", "maybe", "true"]),
        ("aeron:ipc?init-term-id=5", ["init-term-id", "term-id", "term-offset"]),
    ],
)
def test_invalid_channel_uri(client: aeron_async.Aeron, channel: str, fragments: list[str]) -> None:
    with pytest.raises(aeron_async.InvalidChannelError) as info:
        client.add_publication(channel, 1)
    message = str(info.value)
    for fragment in fragments:
        assert fragment in message, message
    # the client is still usable
    assert client.add_publication("aeron:ipc", 1).stream_id == 1


def test_invalid_channel_for_subscription(client: aeron_async.Aeron) -> None:
    with pytest.raises(aeron_async.InvalidChannelError, match="tether"):
        client.add_subscription("aeron:ipc?tether=sometimes", 1)


def test_message_too_long_names_limit_and_loses_nothing(client: aeron_async.Aeron) -> None:
    sub = client.add_subscription("aeron:ipc?term-length=64k", 2)
    pub = client.add_publication("aeron:ipc?term-length=64k", 2)
    wait_for(lambda: pub.is_connected)
    offer_all(pub, b"before")
    with pytest.raises(aeron_async.MessageTooLongError) as info:
        pub.offer(bytes(pub.max_message_length + 1))
    assert str(pub.max_message_length) in str(info.value) and "term-length" in str(info.value)
    with pytest.raises(aeron_async.MessageTooLongError):
        pub.offer_vectors([bytes(pub.max_message_length), b"x"])
    offer_all(pub, bytes(pub.max_message_length))
    offer_all(pub, b"after")
    got: list[bytes] = []
    wait_for(lambda: got.extend(m.data for m in sub.poll_messages()) or len(got) >= 3)
    assert got == [b"before", bytes(pub.max_message_length), b"after"]


def test_term_length_not_power_of_two_in_driver_context(aeron_dir: str) -> None:
    with pytest.raises(aeron_async.ConfigurationError, match="power of two") as info:
        aeron_async.MediaDriver.launch(aeron_dir=aeron_dir, ipc_term_buffer_length=100_000)
    assert "AERON_IPC_TERM_BUFFER_LENGTH" in str(info.value)


def test_bad_driver_option_values(aeron_dir: str) -> None:
    with pytest.raises(aeron_async.ConfigurationError, match="threading mode"):
        aeron_async.MediaDriver.launch(aeron_dir=aeron_dir, threading_mode="PARALLEL")
    with pytest.raises(aeron_async.ConfigurationError, match="duration"):
        aeron_async.MediaDriver.launch(aeron_dir=aeron_dir, client_liveness_timeout="soon")
    with pytest.raises(aeron_async.ConfigurationError, match="idle"):
        aeron_async.MediaDriver.launch(aeron_dir=aeron_dir, shared_idle_strategy="napping")
    with pytest.raises(aeron_async.ConfigurationError, match="unknown driver option"):
        aeron_async.MediaDriver.launch(aeron_dir=aeron_dir, no_such_option=1)


def test_no_driver_at_directory() -> None:
    missing = new_aeron_dir()
    with pytest.raises(aeron_async.DriverNotFoundError) as info:
        aeron_async.Aeron.connect(missing, driver_timeout=1.0)
    message = str(info.value)
    assert missing in message and "aeron-async driver" in message and "MediaDriver.launch" in message


def test_use_after_close(driver: aeron_async.MediaDriver) -> None:
    client = aeron_async.Aeron.connect(driver.aeron_dir)
    sub = client.add_subscription("aeron:ipc", 3)
    pub = client.add_publication("aeron:ipc", 3)
    pub.close()
    with pytest.raises(aeron_async.ClosedError, match="closed"):
        pub.offer(b"x")
    sub.close()
    with pytest.raises(aeron_async.ClosedError, match="closed"):
        sub.poll(lambda d, h: None, 1)
    pub2 = client.add_publication("aeron:ipc", 3)
    client.close()
    with pytest.raises(aeron_async.ClosedError):
        pub2.offer(b"x")
    with pytest.raises(aeron_async.ClosedError, match="connect a new one"):
        client.add_publication("aeron:ipc", 3)
    client.close()  # idempotent


def test_environment_variables_configure_the_driver(monkeypatch: pytest.MonkeyPatch, aeron_dir: str) -> None:
    monkeypatch.setenv("AERON_IPC_TERM_BUFFER_LENGTH", "128k")
    with aeron_async.MediaDriver.launch(aeron_dir=aeron_dir, **{k: v for k, v in TEST_DRIVER_SETTINGS.items()
                                                                 if k != "ipc_term_buffer_length"}) as driver:
        with aeron_async.Aeron.connect(driver.aeron_dir) as client:
            pub = client.add_publication("aeron:ipc", 4)
            assert pub.term_length == 128 * 1024
            assert pub.max_message_length == 16 * 1024
    monkeypatch.setenv("AERON_IPC_TERM_BUFFER_LENGTH", "12345")
    with pytest.raises(aeron_async.ConfigurationError, match="power of two"):
        aeron_async.MediaDriver.launch(aeron_dir=aeron_dir)


# ---- one hierarchy: everything the package raises is an AeronError ----

def _package_modules() -> list[types.ModuleType]:
    """Every module of aeron_async (not the `python -m` entry points, nor the JVM connector's build
    script, which setup.py loads by path with the standard library only, before the package exists),
    imported; a module is left out only when a module of an extra that is not installed here is what
    it could not import."""
    modules = []
    for info in pkgutil.walk_packages(aeron_async.__path__, "aeron_async."):
        if info.name.rpartition(".")[2] == "__main__" or info.name == "aeron_async.spark.jvm.build":
            continue
        try:
            modules.append(importlib.import_module(info.name))
        except ImportError as exc:  # MissingExtraError included
            extra = extras.extra_of_module(exc.name or "")
            assert extra is not None and extras.missing(extra), (info.name, exc)
    return modules


def test_every_exception_class_of_the_package_is_an_aeron_error() -> None:
    defined: dict[str, type[BaseException]] = {}
    for module in _package_modules():
        for value in vars(module).values():
            if (isinstance(value, type) and issubclass(value, BaseException)
                    and value.__module__.startswith("aeron_async")):
                defined[f"{value.__module__}.{value.__qualname__}"] = value
    outside = sorted(name for name, cls in defined.items() if not issubclass(cls, errors.AeronError))
    assert outside == [], outside
    # the walk found the classes that live outside errors.py, and the ones moved into it
    for name in ("aeron_async.extras.MissingExtraError", "aeron_async.archive._codec.MalformedMessageError",
                 "aeron_async.errors.DataLossError", "aeron_async.errors.BenchError",
                 "aeron_async.errors.InvalidArgumentError", "aeron_async.errors.SinkError"):
        assert name in defined, sorted(defined)
    if not extras.missing("spark"):
        assert "aeron_async.spark.options.OptionError" in defined


@pytest.mark.parametrize("cls, builtin", [
    (extras.MissingExtraError, ImportError),
    (errors.DataLossError, RuntimeError),
    (errors.SinkError, RuntimeError),
    (errors.BenchError, RuntimeError),
    (errors.BenchTimeoutError, TimeoutError),
    (errors.BenchTimeoutError, RuntimeError),
    (errors.InvalidArgumentError, ValueError),
    (errors.InvalidArgumentError, errors.ConfigurationError),
    (_codec.MalformedMessageError, ValueError),
])
def test_classes_brought_into_the_hierarchy_keep_their_builtin_base(
        cls: type[BaseException], builtin: type[BaseException]) -> None:
    """`except ImportError` / `except RuntimeError` / `except ValueError` still catch them."""
    assert issubclass(cls, errors.AeronError) and issubclass(cls, builtin)


def test_missing_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(extras.EXTRAS, "nothing", (("aeron_async_no_such_module", "no-such-dist"),))
    with pytest.raises(ImportError, match=r"'nothing' extra: pip install 'aeron_async\[nothing\]' "
                                          r"\(missing: no-such-dist\)") as info:
        extras.require("nothing", "this tool")
    assert isinstance(info.value, extras.MissingExtraError) and isinstance(info.value, errors.AeronError)
    assert extras.MissingExtraError("x", name="pyspark").name == "pyspark"


def test_archive_codec_failures_come_through_the_native_error_mapping() -> None:
    # the native encoder refuses a template it does not know: INVALID_ARGUMENT, still a ValueError
    with pytest.raises(errors.InvalidArgumentError, match="^cannot encode template 9999: .*9999") as info:
        _codec._encode(9999, "close_session_request", control_session_id=1)
    assert info.value.code == errors.INVALID_ARGUMENT and isinstance(info.value, ValueError)
    assert lib.aa_errcode() == errors.INVALID_ARGUMENT
    with pytest.raises(errors.InvalidArgumentError, match="must be ASCII"):
        _codec.stop_recording(1, 2, 3, "aeron:udp?endpoint=h\u00f6st:1")
    # a truncated response: MALFORMED_COMMAND, which has no class of its own, so MalformedMessageError
    with pytest.raises(_codec.MalformedMessageError, match="shorter") as malformed:
        _codec.decode(b"\x01\x02")
    assert malformed.value.code == errors.MALFORMED_COMMAND
    truncated = struct.pack("<HHHH", 32, _codec.CONTROL_RESPONSE, _codec.SCHEMA_ID, _codec.SCHEMA_VERSION) + b"\0" * 4
    with pytest.raises(_codec.MalformedMessageError) as malformed:
        _codec.decode(truncated)
    assert malformed.value.code == errors.MALFORMED_COMMAND and str(malformed.value)
    assert str(malformed.value) == ffi.string(lib.aa_errmsg()).decode()


def test_argument_checks_raise_invalid_argument_error(tmp_path: pathlib.Path) -> None:
    from aeron_async.archive.replay_merge import check_merge_channels
    from aeron_async.bench.cases import offset_port
    from aeron_async.bench.worker import run_backend, wait_until
    from aeron_async.client import check_wake_spin
    from aeron_async.ready import check_ready
    from aeron_async.resolve import FILE_NAME, read_name_resolutions
    from aeron_async.stat import run as stat_run

    with pytest.raises(errors.InvalidArgumentError, match="wake_spin=1"):
        check_wake_spin(1)
    with pytest.raises(errors.InvalidArgumentError, match="max_age_ms"):
        check_ready(None, max_age_ms=0)
    with pytest.raises(errors.InvalidArgumentError, match="--interval"):
        stat_run(argparse.Namespace(interval=0), io.StringIO())
    with pytest.raises(errors.InvalidArgumentError, match="multi-destination"):
        check_merge_channels("aeron:udp?endpoint=localhost:1", "aeron:udp?endpoint=localhost:2",
                             "aeron:udp?endpoint=localhost:3")
    with pytest.raises(errors.InvalidArgumentError, match="live_destination"):
        check_merge_channels("aeron:udp?control-mode=manual", "aeron:udp?endpoint=localhost:2", "aeron:ipc")
    (tmp_path / FILE_NAME).write_bytes(bytes(4096))
    with pytest.raises(errors.InvalidArgumentError, match="not a name resolutions table"):
        read_name_resolutions(str(tmp_path))
    with pytest.raises(errors.InvalidArgumentError, match="endpoint=HOST:PORT"):
        offset_port("aeron:ipc", 1)

    async def nothing() -> None:
        pass

    with pytest.raises(errors.InvalidArgumentError, match="unknown backend 'curio'"):
        run_backend("curio", nothing)
    with pytest.raises(errors.BenchTimeoutError, match="waiting for nothing"):
        wait_until(lambda: False, 0, "nothing")


def test_spark_errors() -> None:
    pytest.importorskip("pyspark")
    pytest.importorskip("pyarrow")
    from aeron_async.spark import columns, provenance, sink
    from aeron_async.spark.options import parse_read_options

    with pytest.raises(errors.InvalidArgumentError, match="partitions"):
        provenance.encode(provenance.KIND_STREAM, 0, provenance.PARTITION_MAX + 1, 0)
    with pytest.raises(errors.InvalidArgumentError, match="kind=7"):
        provenance.encode(7, 0, 0, 0)
    # the native core refuses columns without rows, as INVALID_ARGUMENT
    with pytest.raises(errors.InvalidArgumentError, match="row_capacity > 0") as info:
        columns.Columns(0, 64, 0, 64)
    assert info.value.code == errors.INVALID_ARGUMENT
    with pytest.raises(errors.MessageTooLongError, match="Arrow binary column"):
        columns.Columns(1, 64, 0, 64).grow(columns.MAX_DATA_CAPACITY + 1)
    options = parse_read_options({"recordingIds": "1"}, streaming=False)
    assert options.fail_on_data_loss
    with pytest.raises(columns.DataLossError, match="truncated .*failOnDataLoss=false"):
        columns.data_loss(options, "recording 1 was truncated")
    assert columns.DataLossError is errors.DataLossError
    with pytest.raises(errors.SinkError, match="runs in a Spark task"):
        sink._task_identity(provenance.KIND_STREAM, 0)
