"""Generates the archive codecs' C layouts from the SBE schemas in `protocols/` (Python's standard
library only), as Aeron generates its codecs from the same schemas with SBE's tool.

Inputs: `protocols/aeron-archive-codecs.xml` (schema 101: control requests and responses, the catalog's
header, descriptor header and descriptor, recording signals and events) and
`protocols/aeron-archive-mark-codecs.xml` (schema 100: the archive mark file's header), in SBE's XML form.

Outputs (build products, not committed; both build paths write them before compiling:
`_native/build_ffi.py` under pip, `_native/Makefile` for the native tests):

- `protocols/aa_archive_codecs_gen.h`: every schema-derived fact of the C API, in a CDEF block that
  `protocols/aa_archive_codecs.h` splices into the cffi cdef: the schema ids and versions, the message
  header's length, the var-data limit, each enum's values and the enums' null, the message header and
  var-data structs, the template ids and block lengths, one struct per message (fields in declaration
  order, camelCase names in snake_case; int64/int32/int8 fields and int32 enums as int64_t/int32_t/
  int8_t, var-data fields as aa_archive_var_t) and the union aa_archive_message_t of them all.
- `protocols/aa_archive_codecs_gen.inc`: the layout tables of `protocols/aa_archive_codecs.c` (included
  there, after the table types): per message its fixed fields (wire offset, size, sinceVersion, struct
  offset, the value a field reads as when the header's version predates it) and var-data fields, the
  templates, and the enums' names.

SBE's layout rules (reference aeron-archive-codecs.md): fields are packed in declaration order with no
implicit alignment; an explicit `offset` moves a field on (never back); the block length is the end of
the last field unless the message sets `blockLength`; var data follows the block in declaration order.
A field newer than the acting version reads as its type's nullValue (optional types) or its primitive's
SBE null; the codec reads a field of version 0 as 0 when the caller passes a negative version.

Run `python3 _native/gen_codecs.py` to write the outputs (a file whose text is unchanged is left alone).
What the codec cannot carry (repeating groups, sets, composite or constant fields, 2-byte fields, a
message header other than four uint16) is refused with the schema file and element named, never skipped.
"""

import os
import pathlib
import re
import sys
import xml.etree.ElementTree as ET
from dataclasses import dataclass

ROOT = pathlib.Path(__file__).resolve().parent.parent

# (schema file, the C macros' prefix of its id and version), in the order the C API lists them
SCHEMAS = (
    ("protocols/aeron-archive-codecs.xml", "AA_ARCHIVE_SCHEMA"),
    ("protocols/aeron-archive-mark-codecs.xml", "AA_ARCHIVE_MARK_SCHEMA"),
)
HEADER = "protocols/aa_archive_codecs_gen.h"
TABLES = "protocols/aa_archive_codecs_gen.inc"
OUTPUTS = (HEADER, TABLES)

# The C names of each enum's constants: the prefix before the value's name (the C API's spelling).
ENUM_PREFIXES = {
    "ControlResponseCode": "AA_ARCHIVE_RESPONSE_",
    "SourceLocation": "AA_ARCHIVE_SOURCE_",
    "BooleanType": "AA_ARCHIVE_",
    "RecordingSignal": "AA_ARCHIVE_SIGNAL_",
    "RecordingState": "AA_ARCHIVE_RECORDING_",
}

# SBE's primitives: size in bytes, the C type of a message field, and the default null value
PRIMITIVES = {
    "int8": (1, "int8_t", -(2**7)),
    "uint8": (1, "uint8_t", 2**8 - 1),
    "int16": (2, "int16_t", -(2**15)),
    "uint16": (2, "uint16_t", 2**16 - 1),
    "int32": (4, "int32_t", -(2**31)),
    "uint32": (4, "uint32_t", 2**32 - 1),
    "int64": (8, "int64_t", -(2**63)),
    "uint64": (8, "uint64_t", 2**64 - 1),
}
FIELD_SIZES = (1, 4, 8)  # what aa_archive_codecs.c reads and writes (and writes nulls of)
MESSAGE_HEADER = ("blockLength", "templateId", "schemaId", "version")


class SchemaError(Exception):
    """The schema says something wrong, or something the codec cannot carry."""


@dataclass(frozen=True)
class Enum:
    name: str
    primitive: str
    values: tuple[tuple[str, int], ...]


@dataclass(frozen=True)
class SimpleType:
    name: str
    primitive: str
    optional: bool
    null_value: int | None  # the schema's nullValue, if any


@dataclass(frozen=True)
class Field:
    name: str
    type_name: str
    primitive: str
    enum: str | None
    offset: int
    since_version: int
    optional: bool
    null_value: int  # what it reads as when the acting version predates it


@dataclass(frozen=True)
class VarField:
    name: str
    ascii: bool
    since_version: int


@dataclass(frozen=True)
class Message:
    template_id: int
    name: str
    schema_id: int
    schema_version: int
    block_length: int
    since_version: int
    fields: tuple[Field, ...]
    vars: tuple[VarField, ...]


@dataclass(frozen=True)
class Schema:
    path: str
    macro: str
    schema_id: int
    version: int
    header_length: int
    var_max_length: int
    enums: tuple[Enum, ...]
    messages: tuple[Message, ...]


def snake(name: str) -> str:
    """camelCase or CamelCase to snake_case (a digit stays on its word: StartRecordingRequest2)."""
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name).lower()


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def _int(element: ET.Element, attribute: str, where: str, default: int | None = None) -> int:
    text = element.get(attribute)
    if text is None:
        if default is None:
            raise SchemaError(f"{where}: no {attribute}")
        return default
    try:
        return int(text)
    except ValueError:
        raise SchemaError(f"{where}: {attribute}={text!r} is not an integer") from None


def _required(element: ET.Element, attribute: str, where: str) -> str:
    value = element.get(attribute)
    if not value:
        raise SchemaError(f"{where}: no {attribute}")
    return value


def parse_schema(path: str, macro: str, root: pathlib.Path = ROOT) -> Schema:
    """One schema file, checked and laid out."""
    tree = ET.parse(root / path).getroot()
    if _local(tree.tag) != "messageSchema":
        raise SchemaError(f"{path}: the root element is {_local(tree.tag)}, not sbe:messageSchema")
    if tree.get("byteOrder", "littleEndian") != "littleEndian":
        raise SchemaError(f"{path}: byteOrder {tree.get('byteOrder')}: the codec is little-endian only")
    schema_id = _int(tree, "id", path)
    version = _int(tree, "version", path, 0)

    enums: dict[str, Enum] = {}
    simple: dict[str, SimpleType] = {}
    var_encodings: dict[str, tuple[int, bool]] = {}  # name: (largest length, US-ASCII)
    header_length = None
    for types in (child for child in tree if _local(child.tag) == "types"):
        for element in types:
            kind = _local(element.tag)
            name = _required(element, "name", f"{path}: a <{kind}>")
            where = f"{path}: {kind} {name}"
            if kind == "type":
                primitive = _required(element, "primitiveType", where)
                if primitive not in PRIMITIVES:
                    raise SchemaError(f"{where}: primitiveType {primitive} is not one the codec carries")
                presence = element.get("presence", "required")
                if presence == "constant":
                    raise SchemaError(f"{where}: constant types are not carried by the codec")
                optional = presence == "optional"
                null = _int(element, "nullValue", where) if element.get("nullValue") is not None else None
                simple[name] = SimpleType(name, primitive, optional, null)
            elif kind == "enum":
                primitive = _required(element, "encodingType", where)
                if primitive not in PRIMITIVES:
                    raise SchemaError(f"{where}: encodingType {primitive} is not one the codec carries")
                try:
                    values = tuple((_required(v, "name", where), int((v.text or "").strip()))
                                   for v in element if _local(v.tag) == "validValue")
                except ValueError:
                    raise SchemaError(f"{where}: a validValue is not an integer") from None
                if not values:
                    raise SchemaError(f"{where}: no validValue")
                if name not in ENUM_PREFIXES:
                    raise SchemaError(f"{where}: give its constants' C prefix in ENUM_PREFIXES ({__file__})")
                enums[name] = Enum(name, primitive, values)
            elif kind == "composite":
                members = [(m.get("name"), m.get("primitiveType"), m) for m in element]
                if name == "messageHeader":
                    if tuple((n, p) for n, p, _ in members) != tuple((n, "uint16") for n in MESSAGE_HEADER):
                        raise SchemaError(f"{where}: the codec reads a header of four uint16 "
                                          f"({', '.join(MESSAGE_HEADER)})")
                    header_length = 2 * len(MESSAGE_HEADER)
                elif [n for n, _, _ in members] == ["length", "varData"]:
                    length, data = members[0][2], members[1][2]
                    if length.get("primitiveType") != "uint32" or data.get("length") != "0":
                        raise SchemaError(f"{where}: a var-data encoding is a uint32 length then varData of length 0")
                    var_encodings[name] = (_int(length, "maxValue", where), data.get("characterEncoding") == "US-ASCII")
                # other composites (groupSizeEncoding) are declared but used by no message
            elif kind == "set":
                raise SchemaError(f"{where}: sets (bitsets) are not carried by the codec")
            else:
                raise SchemaError(f"{where}: unknown type element <{kind}>")
    if header_length is None:
        raise SchemaError(f"{path}: no messageHeader composite")
    if len({max_length for max_length, _ in var_encodings.values()}) != 1:
        raise SchemaError(f"{path}: the var-data encodings must share one maxValue (the codec has one limit)")

    messages = []
    for element in tree:
        if _local(element.tag) != "message":
            continue
        name = _required(element, "name", f"{path}: a message")
        where = f"{path}: message {name}"
        template_id = _int(element, "id", where)
        if not 0 <= template_id <= PRIMITIVES["uint16"][2]:
            raise SchemaError(f"{where}: template id {template_id} does not fit the header's uint16")
        fields: list[Field] = []
        var_fields: list[VarField] = []
        offset = 0
        for item in element:
            kind = _local(item.tag)
            field_name = _required(item, "name", f"{where}: a <{kind}>")
            at = f"{where}, {kind} {field_name}"
            if kind == "group":
                raise SchemaError(f"{at}: repeating groups are not carried by the codec")
            if kind not in ("field", "data"):
                raise SchemaError(f"{at}: unknown message element <{kind}>")
            type_name = _required(item, "type", at)
            since = _int(item, "sinceVersion", at, 0)
            if kind == "field":
                if item.get("presence") == "constant":
                    raise SchemaError(f"{at}: constant fields are not carried by the codec")
                if var_fields:
                    raise SchemaError(f"{at}: fixed fields come before var data")
                enum = enums.get(type_name)
                named = simple.get(type_name)
                if enum is not None:
                    primitive, optional, schema_null = enum.primitive, False, None
                elif named is not None:
                    primitive, optional, schema_null = named.primitive, named.optional, named.null_value
                elif type_name in PRIMITIVES:
                    primitive, optional, schema_null = type_name, False, None
                else:
                    raise SchemaError(f"{at}: type {type_name} is not a primitive, simple type or enum of the schema")
                size = PRIMITIVES[primitive][0]
                if size not in FIELD_SIZES:
                    raise SchemaError(f"{at}: {size}-byte fields are not carried by the codec")
                explicit = item.get("offset")
                if explicit is not None:
                    if int(explicit) < offset:
                        raise SchemaError(f"{at}: offset {explicit} overlaps the field before (ends at {offset})")
                    offset = int(explicit)
                null = schema_null if schema_null is not None else PRIMITIVES[primitive][2]
                fields.append(Field(field_name, type_name, primitive, enum.name if enum else None, offset, since,
                                    optional, null if since > 0 else 0))
                offset += size
            else:
                encoding = var_encodings.get(type_name)
                if encoding is None:
                    raise SchemaError(f"{at}: type {type_name} is not a var-data encoding of the schema")
                var_fields.append(VarField(field_name, encoding[1], since))
        names = [f.name for f in fields] + [v.name for v in var_fields]
        if len(set(names)) != len(names):
            raise SchemaError(f"{where}: a field name is used twice")
        block_length = _int(element, "blockLength", where, offset)
        if block_length < offset:
            raise SchemaError(f"{where}: blockLength {block_length} is shorter than its fields ({offset} bytes)")
        if block_length > PRIMITIVES["uint16"][2]:
            raise SchemaError(f"{where}: blockLength {block_length} does not fit the header's uint16")
        messages.append(Message(template_id, name, schema_id, version, block_length,
                                _int(element, "sinceVersion", where, 0), tuple(fields), tuple(var_fields)))
    if not messages:
        raise SchemaError(f"{path}: no message")
    (var_max,) = {max_length for max_length, _ in var_encodings.values()}
    return Schema(path, macro, schema_id, version, header_length, var_max, tuple(enums.values()), tuple(messages))


def load(root: pathlib.Path = ROOT) -> list[Schema]:
    """Every schema of SCHEMAS, with the checks that span them."""
    schemas = [parse_schema(path, macro, root) for path, macro in SCHEMAS]
    ids = [m.template_id for s in schemas for m in s.messages]
    duplicated = sorted({i for i in ids if ids.count(i) > 1})
    if duplicated:
        raise SchemaError(f"template ids {duplicated} are used twice (the codec looks a message up by its id)")
    if len({s.header_length for s in schemas}) != 1 or len({s.var_max_length for s in schemas}) != 1:
        raise SchemaError("the schemas must share the message header and the var-data limit")
    enums = [e for s in schemas for e in s.enums]
    if len({e.primitive for e in enums}) != 1:
        raise SchemaError("the enums must share one encoding (the C API has one enum null)")
    if len({e.name for e in enums}) != len(enums):
        raise SchemaError("an enum is declared in two schemas")
    return schemas


def _c_int(value: int, primitive: str) -> str:
    if value == PRIMITIVES["int64"][2]:
        return "INT64_MIN"
    if value == PRIMITIVES["int32"][2] and primitive != "int64":
        return "INT32_MIN"
    return str(value)


def _banner(what: str) -> str:
    sources = " and ".join(path for path, _ in SCHEMAS)
    return (f"/* {what}\n * Generated by _native/gen_codecs.py from {sources}:\n"
            f" * do not edit (change the schema). docs/architecture.md, Archive, \"Files and codecs\". */\n")


def _field_comment(field: Field) -> str:
    notes = []
    if field.enum:
        notes.append(field.enum)
    if field.since_version > 0:
        notes.append(f"since v{field.since_version}, {field.null_value} below")
    elif field.optional:
        notes.append(f"optional, null {field.null_value}")
    return f"@{field.offset}" + (": " + "; ".join(notes) if notes else "")


def _except(others: list[Schema]) -> str:
    """", except MarkFileHeader: schema 100" for the messages of the schemas after the first."""
    named = "; ".join(f"{', '.join(m.name for m in s.messages)}: schema {s.schema_id}" for s in others)
    return f", except {named}" if named else ""


def header_text(schemas: list[Schema]) -> str:
    messages = [m for s in schemas for m in s.messages]
    enums = [e for s in schemas for e in s.enums]
    out = [_banner("Aeron Archive SBE schemas: ids, enums and one struct per message (aa_archive_codecs.h)."),
           "#ifndef AA_ARCHIVE_CODECS_GEN_H", "#define AA_ARCHIVE_CODECS_GEN_H", "",
           "#include <stdint.h>", "", "/* CDEF BEGIN */", ""]
    for s in schemas:
        out += [f"#define {s.macro}_ID {s.schema_id}", f"#define {s.macro}_VERSION {s.version}"]
    out += ["/* blockLength, templateId, schemaId, version: uint16 each */",
            f"#define AA_ARCHIVE_MESSAGE_HEADER_LENGTH {schemas[0].header_length}",
            "/* the largest var-data length SBE's varAsciiEncoding/varDataEncoding allow */",
            f"#define AA_ARCHIVE_VAR_DATA_MAX_LENGTH {schemas[0].var_max_length}", ""]
    for enum in enums:
        out.append(f"/* {enum.name} ({enum.primitive}) */")
        out += [f"#define {ENUM_PREFIXES[enum.name]}{name} {value}" for name, value in enum.values]
        out.append("")
    out += ["/* the SBE null of an enum field */",
            f"#define AA_ARCHIVE_ENUM_NULL {PRIMITIVES[enums[0].primitive][2]}", "",
            "/* A var-data field: length bytes at data (decoded: pointing into the decoded buffer). */",
            "typedef struct aa_archive_var_stct", "{", "    const uint8_t *data;", "    uint32_t length;", "}",
            "aa_archive_var_t;", "",
            "/* The 8-byte SBE message header (uint16 fields, held as int32_t). */",
            "typedef struct aa_archive_header_stct", "{"]
    out += [f"    int32_t {snake(name)};" for name in MESSAGE_HEADER]
    out += ["}", "aa_archive_header_t;", "",
            f"/* Template ids (schema {schemas[0].schema_id}{_except(schemas[1:])}). */"]
    out += [f"#define AA_ARCHIVE_TEMPLATE_{snake(m.name).upper()} {m.template_id}" for m in messages]
    out += ["", "/* Block lengths (the fixed part after the 8-byte message header) of the current schema versions. */"]
    out += [f"#define AA_ARCHIVE_{snake(m.name).upper()}_BLOCK_LENGTH {m.block_length}" for m in messages]
    for m in messages:
        since = f", since v{m.since_version}" if m.since_version else ""
        schema = f", schema {m.schema_id}" if m.schema_id != schemas[0].schema_id else ""
        out += ["", f"/* {m.template_id} {m.name}, block {m.block_length}{since}{schema} */",
                f"typedef struct aa_archive_{snake(m.name)}_stct", "{"]
        for f in m.fields:
            out.append(f"    {PRIMITIVES[f.primitive][1]} {snake(f.name)}; /* {_field_comment(f)} */")
        for v in m.vars:
            since_note = f"; since v{v.since_version}, absent below" if v.since_version else ""
            out.append(f"    aa_archive_var_t {snake(v.name)}; /* {'ASCII' if v.ascii else 'bytes'}{since_note} */")
        out += ["}", f"aa_archive_{snake(m.name)}_t;"]
    out += ["", "typedef struct aa_archive_message_stct", "{",
            "    int32_t template_id; /* selects the member of the union */",
            "    int32_t schema_id; /* decoded: the header's; ignored by the encoders */",
            "    int32_t block_length; /* decoded: the header's; ignored by the encoders */",
            "    int32_t version; /* decoded: the header's (the acting version); ignored by the encoders */",
            "    union", "    {"]
    out += [f"        aa_archive_{snake(m.name)}_t {snake(m.name)};" for m in messages]
    out += ["    };", "}", "aa_archive_message_t;", "", "/* CDEF END */", "", "#endif", ""]
    return "\n".join(out)


def tables_text(schemas: list[Schema]) -> str:
    messages = [m for s in schemas for m in s.messages]
    out = [_banner("The layout tables of protocols/aa_archive_codecs.c, which includes this file after their types."),
           "/* The first member of the union, the base every struct offset is taken from. */",
           f"#define AA_ARCHIVE_MESSAGE_BASE(msg) (&(msg)->{snake(messages[0].name)})"]
    for m in messages:
        struct = f"aa_archive_{snake(m.name)}_t"
        out += ["", f"/* {m.template_id} {m.name} */"]
        if m.fields:
            out.append(f"static const aa_archive_field_t g_{snake(m.name)}_fields[] =")
            out.append("{")
            for f in m.fields:
                out.append(f"    {{ \"{f.name}\", {f.offset}, {PRIMITIVES[f.primitive][0]}, {f.since_version}, "
                           f"offsetof({struct}, {snake(f.name)}), {_c_int(f.null_value, f.primitive)} }},")
            out.append("};")
        if m.vars:
            out.append(f"static const aa_archive_var_field_t g_{snake(m.name)}_vars[] =")
            out.append("{")
            for v in m.vars:
                out.append(f"    {{ \"{v.name}\", {v.since_version}, offsetof({struct}, {snake(v.name)}) }},")
            out.append("};")
    out += ["", "static const aa_archive_template_t g_templates[] =", "{"]
    for m in messages:
        fields = f"g_{snake(m.name)}_fields, AA_ARRAY_LENGTH(g_{snake(m.name)}_fields)" if m.fields else "NULL, 0"
        var_fields = f"g_{snake(m.name)}_vars, AA_ARRAY_LENGTH(g_{snake(m.name)}_vars)" if m.vars else "NULL, 0"
        out.append(f"    {{ {m.template_id}, {m.schema_id}, {m.schema_version}, \"{m.name}\", {m.block_length}, "
                   f"{fields}, {var_fields} }},")
    out.append("};")
    for e in (e for s in schemas for e in s.enums):
        out += ["", f"static const aa_archive_enum_value_t g_{snake(e.name)}_values[] =", "{"]
        out += [f"    {{ {value}, \"{name}\" }}," for name, value in e.values]
        out.append("};")
    out += ["", "static const aa_archive_enum_t g_enums[] =", "{"]
    out += [f"    {{ \"{e.name}\", g_{snake(e.name)}_values, AA_ARRAY_LENGTH(g_{snake(e.name)}_values) }},"
            for s in schemas for e in s.enums]
    out += ["};", ""]
    return "\n".join(out)


def generate(root: pathlib.Path = ROOT) -> dict[str, str]:
    """The text of every output (named relative to the repository root), from the schemas alone."""
    schemas = load(root)
    return {HEADER: header_text(schemas), TABLES: tables_text(schemas)}


def write(root: pathlib.Path = ROOT) -> list[str]:
    """Writes the outputs whose text changed; returns their names. An output whose text is current but
    is older than an input is touched, so make sees it current."""
    inputs = [root / path for path, _ in SCHEMAS] + [pathlib.Path(__file__).resolve()]
    newest_input = max(path.stat().st_mtime for path in inputs)
    written = []
    for name, text in generate(root).items():
        path = root / name
        if not path.exists() or path.read_text() != text:
            temporary = path.with_name(path.name + f".{os.getpid()}.tmp")
            temporary.write_text(text)
            os.replace(temporary, path)  # never a half-written header for a parallel compile to read
            written.append(name)
        elif path.stat().st_mtime < newest_input:
            path.touch()
    return written


if __name__ == "__main__":
    try:
        write()
    except SchemaError as error:
        sys.exit(f"gen_codecs: {error}")
