"""The archive codecs' schemas and their generator (_native/gen_codecs.py; docs/architecture.md, Archive,
"Files and codecs"): the SBE schemas in protocols/ carry every message the reference lists, with its
template id, schema, block length, fields and sinceVersion, and every enum value; the generator's
output depends on the schemas alone (the same bytes on every run, whatever the hash seed), is what the
build compiled, and is never committed; what the codec cannot carry is refused, not skipped."""

from __future__ import annotations

import os
import pathlib
import runpy
import shutil
import subprocess
import sys
import types

import pytest

from aeron_async._aeron_native import ffi, lib

from test_archive_codecs import BY_ID

ROOT = pathlib.Path(__file__).resolve().parents[2]

# aeron-archive-codecs.md, "Message index": the messages defined since a version after the first
# (sinceVersion "-" elsewhere); template 2, ConnectRequest, is "only inside an XML comment, not defined"
REFERENCE_MESSAGE_SINCE = {66: 6, 67: 9, 68: 9, 104: 5, 105: 10, 106: 11, 107: 13}

# aeron-archive-codecs.md, "Enums" (the SBE generated NULL_VAL rows left out)
REFERENCE_ENUMS = {
    "ControlResponseCode": [("OK", 0), ("ERROR", 1), ("RECORDING_UNKNOWN", 2), ("SUBSCRIPTION_UNKNOWN", 3)],
    "SourceLocation": [("LOCAL", 0), ("REMOTE", 1)],
    "BooleanType": [("FALSE", 0), ("TRUE", 1)],
    "RecordingSignal": [("START", 0), ("STOP", 1), ("EXTEND", 2), ("REPLICATE", 3), ("MERGE", 4), ("SYNC", 5),
                        ("DELETE", 6), ("REPLICATE_END", 7)],
    "RecordingState": [("INVALID", 0), ("VALID", 1), ("DELETED", 2)],
}


# the generator's names (stdlib only; run as a script by the builds), by path: _native is no package
gen = types.SimpleNamespace(**runpy.run_path(str(ROOT / "_native" / "gen_codecs.py")))


def test_the_schemas_carry_every_message_of_the_reference() -> None:
    """Against the reference's layouts as the golden tests transcribe them (tests/archive/test_archive_codecs.py):
    every template id, name, schema, block length, field (offset, size, sinceVersion, null) and var field."""
    messages = {m.template_id: m for s in gen.load() for m in s.messages}
    assert sorted(messages) == sorted(BY_ID) and len(messages) == 50
    assert 2 not in messages
    formats = {8: "q", 4: "i", 1: "b"}
    for template_id, (_, name, schema_id, block, fields, var_fields) in BY_ID.items():
        m = messages[template_id]
        assert (m.name, m.schema_id, m.block_length) == (name, schema_id, block), template_id
        assert [(gen.snake(f.name), f.offset, formats[gen.PRIMITIVES[f.primitive][0]], f.since_version,
                 f.null_value if f.since_version else None) for f in m.fields] == fields, name
        assert [(gen.snake(v.name), v.since_version) for v in m.vars] == var_fields, name
        assert m.since_version == REFERENCE_MESSAGE_SINCE.get(template_id, 0), name
        assert m.schema_version == {101: 14, 100: 2}[schema_id], name


def test_the_schemas_carry_every_enum_value_and_the_schema_ids_and_versions() -> None:
    schemas = gen.load()
    assert {e.name: list(e.values) for s in schemas for e in s.enums} == REFERENCE_ENUMS
    assert all(e.primitive == "int32" for s in schemas for e in s.enums)
    assert [(s.schema_id, s.version) for s in schemas] == [(101, 14), (100, 2)]
    assert all((s.header_length, s.var_max_length) == (8, 1073741824) for s in schemas)


def test_the_native_library_was_built_from_the_schemas() -> None:
    for s in gen.load():
        assert getattr(lib, f"{s.macro}_ID") == s.schema_id and getattr(lib, f"{s.macro}_VERSION") == s.version
        for m in s.messages:
            c_name = gen.snake(m.name).upper()
            assert getattr(lib, f"AA_ARCHIVE_TEMPLATE_{c_name}") == m.template_id
            assert getattr(lib, f"AA_ARCHIVE_{c_name}_BLOCK_LENGTH") == m.block_length
            assert ffi.string(lib.aa_archive_template_name(m.template_id)).decode() == m.name
            assert lib.aa_archive_template_block_length(m.template_id) == m.block_length
            assert lib.aa_archive_template_schema_id(m.template_id) == m.schema_id
            assert lib.aa_archive_template_field_count(m.template_id) == len(m.fields)
            assert lib.aa_archive_template_var_count(m.template_id) == len(m.vars)
            struct = ffi.typeof(f"aa_archive_{gen.snake(m.name)}_t")
            assert [name for name, _ in struct.fields] == [gen.snake(f.name) for f in (*m.fields, *m.vars)]
        for e in s.enums:
            for name, value in e.values:
                assert getattr(lib, f"{gen.ENUM_PREFIXES[e.name]}{name}") == value


def test_the_generator_output_is_deterministic_and_is_what_the_build_wrote(tmp_path: pathlib.Path) -> None:
    expected = gen.generate()
    assert gen.generate() == expected
    assert sorted(expected) == sorted(gen.OUTPUTS)
    # the build wrote these files (pip through build_ffi.py, or make) before compiling the codecs
    for name, text in expected.items():
        assert (ROOT / name).read_text() == text, f"{name} is not what the schemas generate"
    # a copy of the generator and the schemas alone, run as a script under different hash seeds
    shutil.copy(ROOT / "_native" / "gen_codecs.py", (tmp_path / "_native").mkdir() or tmp_path / "_native")
    (tmp_path / "protocols").mkdir()
    for path, _ in gen.SCHEMAS:
        shutil.copy(ROOT / path, tmp_path / path)
    for seed in ("0", "1", "4242"):
        env = dict(os.environ, PYTHONHASHSEED=seed)
        run = subprocess.run([sys.executable, str(tmp_path / "_native" / "gen_codecs.py")], env=env,
                             capture_output=True, text=True, timeout=60)
        assert run.returncode == 0, run.stderr
        for name, text in expected.items():
            assert (tmp_path / name).read_bytes() == text.encode(), (seed, name)
            (tmp_path / name).unlink()


def test_generated_files_are_ignored_and_not_committed() -> None:
    git = shutil.which("git")
    if git is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout: nothing is committed")
    tracked = subprocess.run([git, "ls-files", *gen.OUTPUTS], cwd=ROOT, capture_output=True, text=True, check=True)
    assert tracked.stdout == ""
    ignored = subprocess.run([git, "check-ignore", *gen.OUTPUTS], cwd=ROOT, capture_output=True, text=True)
    assert ignored.stdout.split() == list(gen.OUTPUTS)
    for path, _ in gen.SCHEMAS:  # the schemas are sources
        assert subprocess.run([git, "ls-files", "--error-unmatch", path], cwd=ROOT, capture_output=True).returncode == 0


def _schema_copy(tmp_path: pathlib.Path, old: str, new: str) -> pathlib.Path:
    """A copy of the mark file's schema with `old` replaced by `new`."""
    path = tmp_path / "protocols" / "aeron-archive-mark-codecs.xml"
    path.parent.mkdir(exist_ok=True)
    text = (ROOT / "protocols" / "aeron-archive-mark-codecs.xml").read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))
    return tmp_path


@pytest.mark.parametrize(("old", "new", "error"), [
    ('<data name="controlChannel"',
     '<group name="g" id="20" dimensionType="groupSizeEncoding"><field name="x" id="21" type="int32"/></group>\n'
     '        <data name="controlChannel"', "message MarkFileHeader, group g: repeating groups are not carried"),
    ('<type name="time_t"', '<set name="Flags" encodingType="uint8"><choice name="A">0</choice></set>\n'
     '        <type name="time_t"', "set Flags: sets (bitsets) are not carried"),
    ('offset="56"', 'offset="40"', "field archiveId: offset 40 overlaps the field before (ends at 52)"),
    ('blockLength="128"', 'blockLength="60"', "blockLength 60 is shorter than its fields (64 bytes)"),
    ('type="int32"/>', 'type="int16"/>', "field version: 2-byte fields are not carried"),
    ('<field name="pid" id="4" type="int64"/>', '<field name="pid" id="4" type="pid_t"/>',
     "field pid: type pid_t is not a primitive, simple type or enum of the schema"),
    ('<field name="version" id="1" type="int32"/>', '<data name="pad" id="99" type="varAsciiEncoding"/>'
     '<field name="version" id="1" type="int32"/>', "field version: fixed fields come before var data"),
    ('<type name="version" primitiveType="uint16"/>', '<type name="version" primitiveType="uint32"/>',
     "messageHeader: the codec reads a header of four uint16"),
    ('<field name="pid" id="4" type="int64"/>', '<field name="pid" id="4" type="int64" presence="constant"/>',
     "field pid: constant fields are not carried"),
    ('name="MarkFileHeader" id="200"', 'name="MarkFileHeader" id="70000"',
     "message MarkFileHeader: template id 70000 does not fit the header's uint16"),
])
def test_what_the_codec_cannot_carry_is_refused(tmp_path: pathlib.Path, old: str, new: str, error: str) -> None:
    root = _schema_copy(tmp_path, old, new)
    with pytest.raises(gen.SchemaError) as info:
        gen.parse_schema("protocols/aeron-archive-mark-codecs.xml", "AA_ARCHIVE_MARK_SCHEMA", root)
    assert error in str(info.value)
    assert str(info.value).startswith("protocols/aeron-archive-mark-codecs.xml: ")


def test_a_template_id_used_twice_is_refused(tmp_path: pathlib.Path) -> None:
    root = _schema_copy(tmp_path, 'name="MarkFileHeader" id="200"', 'name="MarkFileHeader" id="22"')
    shutil.copy(ROOT / "protocols" / "aeron-archive-codecs.xml", root / "protocols")
    with pytest.raises(gen.SchemaError, match=r"template ids \[22\] are used twice"):
        gen.load(root)
