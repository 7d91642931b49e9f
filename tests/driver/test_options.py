"""One option engine (docs/configuration.md): the driver's and the archive's options are native
tables; DriverContext and ArchiveContext take their names, defaults and descriptions from them,
every option is settable from Python and from the CLI, and the CLI's help lists every one."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from typing import Any

import attrs
import pytest

import aeron_async

from aeron_async._ffi import ffi, lib
from aeron_async._options import ARCHIVE, DRIVER, NativeOption, field_name, native_table
from aeron_async.archive.service import ArchiveContext
from aeron_async.context import DriverContext
from aeron_async.errors import ConfigurationError
from conftest import REPO

KINDS = {
    "driver": (DRIVER, DriverContext, lib.aa_driver_context_get, lib.aa_driver_context_free),
    "archive": (ARCHIVE, ArchiveContext, lib.aa_archive_context_get, lib.aa_archive_context_free),
}


@pytest.mark.parametrize("which", sorted(KINDS))
def test_the_context_has_a_field_for_every_native_option_with_its_metadata(which: str) -> None:
    kind, context, _get, _free = KINDS[which]
    table = native_table(kind)
    assert table and len(table) == lib.aa_options_count(kind)
    fields = attrs.fields(context)
    assert [f.name for f in fields] == [option.name for option in table]
    for field, option in zip(fields, table, strict=True):
        assert field.default is None and field.kw_only
        assert dict(field.metadata) == {"env": option.env, "property": option.property, "type": option.type,
                                        "default": option.default, "doc": option.description}
        # the Python type follows the native one where a type says how Python values are converted
        for native_type, annotation in ((lib.AA_OPTION_BOOL, "bool | None"), (lib.AA_OPTION_SIZE, "Size | None"),
                                        (lib.AA_OPTION_DURATION, "Duration | None")):
            assert (option.type == native_type) == (field.type == annotation), (field.name, field.type)


def test_the_tables_describe_the_documented_defaults() -> None:
    driver = {o.env: o for o in native_table(DRIVER)}
    archive = {o.env: o for o in native_table(ARCHIVE)}
    assert (driver["AERON_TERM_BUFFER_LENGTH"].default, driver["AERON_TERM_BUFFER_LENGTH"].type) == \
        ("16m", lib.AA_OPTION_SIZE)
    assert driver["AERON_THREADING_MODE"].property == "aeron.threading.mode"
    assert driver["AERON_CLIENT_LIVENESS_TIMEOUT"].type == lib.AA_OPTION_DURATION
    assert archive["AERON_ARCHIVE_SEGMENT_FILE_LENGTH"].default == "128m"
    assert archive["AERON_ARCHIVE_ID"].name == "archive_id"
    assert lib.aa_options_count(99) == -1
    assert lib.aa_option_describe(DRIVER, len(driver), ffi.new("aa_option_info_t *")) == -1


def _value_for(option: NativeOption) -> tuple[object, Callable[[str], bool]]:
    """A value to set the option to from Python, and a test of what the native context then holds."""
    if option.type == lib.AA_OPTION_BOOL:
        value = option.default != "true"
        return value, lambda held: held == ("true" if value else "false")
    if option.type in (lib.AA_OPTION_INT32, lib.AA_OPTION_INT64):
        number = int(option.default or "0") + 1
        return number, lambda held: held == str(number)
    if option.type == lib.AA_OPTION_SIZE:
        return "192k", lambda held: held == str(192 * 1024)
    if option.type == lib.AA_OPTION_DURATION:
        return 0.25, lambda held: held in ("250000000ns", "250ms")
    if option.env == "AERON_DRIVER_RESOLVER_ALLOWED_NETWORKS":   # a checked CIDR list
        return "10.0.0.0/8,fd00::/8", lambda held: held == "10.0.0.0/8,fd00::/8"
    if option.type == lib.AA_OPTION_STRING and option.default == "":
        return "x", lambda held: held in ("x", "(set)")   # a secret reads back as "(set)"
    if option.type == lib.AA_OPTION_CUSTOM and option.env == "AERON_RECEIVER_GROUP_TAG":
        return 1001, lambda held: held == "1001"
    if option.type == lib.AA_OPTION_CUSTOM and option.env.endswith("_CHECKSUM"):
        return "crc-32c", lambda held: held == "crc-32c"
    if option.type == lib.AA_OPTION_CUSTOM and option.env.endswith("_DIR_GROUP"):
        return 54321, lambda held: held == "54321"   # a gid no group is named for reads back as the number
    if option.type == lib.AA_OPTION_CUSTOM:
        return "drop:data:5%", lambda held: held == "drop:data:5%"
    return option.default, lambda held: held.lower() == option.default.lower()


@pytest.mark.parametrize("which", sorted(KINDS))
def test_every_option_is_settable_from_python(which: str, monkeypatch: pytest.MonkeyPatch) -> None:
    kind, context, get, free = KINDS[which]
    checked = 0
    for option in native_table(kind):
        monkeypatch.delenv(option.env, raising=False)
        value, holds = _value_for(option)
        native: Any = context(**{option.name: value})._to_native()
        try:
            buffer = ffi.new("char[]", 2048)
            for name in (option.env, option.property):
                assert get(native, name.encode(), buffer, 2048) >= 0, (name, value)
                held = ffi.string(buffer).decode()
                assert holds(held), f"{option.name}={value!r} holds {held!r}"
        finally:
            free(native)
        checked += 1
    assert checked == len(attrs.fields(context))


@pytest.mark.parametrize("which", sorted(KINDS))
def test_the_cli_names_reach_every_option(which: str) -> None:
    """`aeron-async driver|archive -o NAME=VALUE` takes an environment name, a property name (with
    or without its prefix) or the context's keyword."""
    kind = KINDS[which][0]
    for option in native_table(kind):
        names = [option.env, option.property, option.property.upper(), option.name]
        assert {field_name(kind, name) for name in names} == {option.name}, names
    assert field_name(DRIVER, "term.buffer.length") == "term_buffer_length"
    assert field_name(ARCHIVE, "segment.file.length") == "segment_file_length"
    with pytest.raises(ConfigurationError, match="unknown driver option 'AERON_NO_SUCH_OPTION'"):
        field_name(DRIVER, "AERON_NO_SUCH_OPTION")


@pytest.mark.parametrize(("typo", "suggested"), [
    ("aeron.term.bufer.length", "aeron.term.buffer.length"),     # spelt as a property: properties suggested
    ("AERON_TERM_BUFER_LENGTH", "AERON_TERM_BUFFER_LENGTH"),     # as an environment name: those
    ("term_bufer_length", "term_buffer_length"),                 # as a keyword: keywords
])
def test_an_unknown_option_is_refused_with_the_closest_valid_names(typo: str, suggested: str) -> None:
    for make in (lambda: DriverContext(**{typo: "1m"}), lambda: DriverContext.from_options({typo: "1m"}),
                 lambda: DriverContext().with_options({typo: "1m"}), lambda: field_name(DRIVER, typo)):
        with pytest.raises(ConfigurationError, match=f"unknown driver option '{typo}': did you mean {suggested}[ ,]"):
            make()
    with pytest.raises(ConfigurationError, match="did you mean segment_file_length"):
        ArchiveContext(segment_file_lenght="1m")


@pytest.mark.parametrize(("variable", "option"), [
    ("AERON_TERM_BUFFER_LENGHT", "AERON_TERM_BUFFER_LENGTH"),
    ("AERON_THREADING_MOD", "AERON_THREADING_MODE"),
    ("AERON_ARCHIVE_CONTROL_CHANEL", "AERON_ARCHIVE_CONTROL_CHANNEL"),   # an archive option, misspelt
])
def test_a_misspelt_option_in_the_environment_stops_the_driver_naming_the_option(
        variable: str, option: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    monkeypatch.setenv(variable, "1m")
    with pytest.raises(ConfigurationError, match=f"environment variable {variable} is not an option: did you mean "
                                                 f"{option}\\? Correct its name or unset it"):
        aeron_async.MediaDriver.launch(aeron_dir=str(tmp_path / "driver"), threading_mode="SHARED",
                                       shared_idle_strategy="backoff")
    assert not (tmp_path / "driver").exists()   # refused before anything was made


def test_other_aeron_variables_in_the_environment_are_left_alone(monkeypatch: pytest.MonkeyPatch,
                                                                 tmp_path: Any) -> None:
    """The AERON_ namespace is shared (docs/configuration.md, "The environment"): an application's
    own variable and Aeron's other programs' do not stop a driver."""
    for name in ("AERON_CHANNEL", "AERON_CLUSTER_DIR", "AERON_SAMPLE_STREAM_ID", "AERON_EVENT_LOG"):
        monkeypatch.setenv(name, "1")
    with aeron_async.MediaDriver.launch(aeron_dir=str(tmp_path / "driver"), threading_mode="SHARED",
                                        shared_idle_strategy="backoff") as driver:
        assert os.path.exists(os.path.join(driver.aeron_dir, "cnc.dat"))


@pytest.mark.parametrize("which", sorted(KINDS))
def test_a_context_takes_every_name_of_every_option(which: str) -> None:
    """`DriverContext(**{"aeron.term.buffer.length": "1m"})`, `from_options` and `with_options` take
    the property name, the environment name and the keyword, as `-o` does."""
    kind, context, _get, _free = KINDS[which]
    for option in native_table(kind):
        for name in (option.property, option.env, option.name):
            made = context.from_options({name: "x"})
            assert getattr(made, option.name) == "x", name
            assert getattr(context(**{name: "x"}), option.name) == "x", name
            assert getattr(context().with_options({name: "x"}), option.name) == "x", name
    with pytest.raises(ConfigurationError, match="give it once"):
        context.from_options({native_table(kind)[0].env: "a", native_table(kind)[0].property: "b"})


def test_the_cli_takes_property_names_and_refuses_a_typo_naming_the_fix() -> None:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (os.environ.get("PYTHONPATH"), REPO) if p))
    result = subprocess.run([sys.executable, "-m", "aeron_async", "driver", "-o", "aeron.term.bufer.length=1m"],
                            capture_output=True, text=True, timeout=60, env=env)
    assert result.returncode == 2
    assert "unknown driver option 'aeron.term.bufer.length': did you mean aeron.term.buffer.length" in result.stderr
    assert "Traceback" not in result.stderr
    result = subprocess.run([sys.executable, "-m", "aeron_async", "archive", "-o", "AERON_ARCHIVE_SEGMENT_FILE_LENGHT=1m"],
                            capture_output=True, text=True, timeout=60, env=env)
    assert result.returncode == 2 and "did you mean AERON_ARCHIVE_SEGMENT_FILE_LENGTH" in result.stderr


@pytest.mark.parametrize("which", sorted(KINDS))
def test_the_cli_help_lists_every_option(which: str) -> None:
    kind = KINDS[which][0]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (os.environ.get("PYTHONPATH"), REPO) if p))
    result = subprocess.run([sys.executable, "-m", "aeron_async", which, "--help-options"],
                            capture_output=True, text=True, timeout=60, env=env)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    table = native_table(kind)
    assert len(lines) == len(table)
    for line, option in zip(lines, table, strict=True):
        assert line.split()[:2] == [option.env, option.property], line
        assert option.description in line


def test_the_driver_options_file_holds_every_option_and_hides_the_token(monkeypatch: pytest.MonkeyPatch) -> None:
    """aa_driver_context_get formats as the options file does: the termination token as "(set)"."""
    monkeypatch.delenv("AERON_DRIVER_TERMINATION_TOKEN", raising=False)
    native: Any = DriverContext(driver_termination_validator="token", driver_termination_token="s3cret")._to_native()
    try:
        buffer = ffi.new("char[]", 64)
        assert lib.aa_driver_context_get(native, b"AERON_DRIVER_TERMINATION_TOKEN", buffer, 64) == 5
        assert ffi.string(buffer) == b"(set)"
        assert lib.aa_driver_context_get(native, b"AERON_NO_SUCH_OPTION", buffer, 64) == -1
        assert lib.aa_driver_context_get(native, b"AERON_DRIVER_TERMINATION_VALIDATOR", buffer, 3) == -1
    finally:
        lib.aa_driver_context_free(native)
