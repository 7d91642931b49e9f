"""The C code's layers and the includes allowed between them: the one table of the house's layering.

Every project header is named from one include root, `_native/src` (the build passes `-I_native/src`
alone): `"concurrent/aa_mpsc_rb.h"`, `"protocols/aa_udp_frames.h"`, `"media/aa_udp_transport.h"`.
`_native/src/protocols` and `_native/src/media` are links to the top-level `protocols/` and `media/`,
so those folders stay where the design card puts them. The first folder of an include is the layer of
the header it names.

Bottom up (a layer may include itself and the layers listed for it, nothing else):

    util        errors, clocks, files, parsing, the option engine, socket addresses, the strategy registry
    concurrent  atomics, ring and broadcast buffers, counters, error log, loss report, doorbells
    logbuffer   log buffer layout and the frames in it, term appenders, readers and scanners
    agent       agents, runners and idle strategies
    uri         channel URI parsing and validation
    protocols   pure protocol logic, sans I/O: wire frames, CnC and client-driver commands,
                loss detection, retransmits, flow and congestion control, archive codecs
    resolver    name resolution: the resolver interface and registry entries, the default,
                csv_table, driver (gossip) and Python resolvers, the executor, the resolutions table
    media       transports and endpoints, publications and images (the driver around them only
                through media/aa_media_services.h)
    strategy    the public face of the strategy registry and the flow-control proxy
    driver      the media driver: context, conductor, sender, receiver
    client      the client library, beside the driver (they meet through the CnC file only)
    archive     the archive, beside the driver (a client of the driver, as Aeron's)
    api         aeron_async.h, the public C API: above everything; aa_options_api.c beside it describes
                the driver's and the archive's option tables side by side

`aeron_async.h` declares every public function (`aa_fastpath.h`, beside it, the table of the message
path's functions that the CPython extension calls). The .c files that define some (IMPLEMENTS_API) include
it for their declarations; no header below it does, so no layer's interface depends on it.

Run `python _native/layers.py` to list violations (tests/project/test_layers.py runs the same check).
"""

import importlib.util
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
API_HEADER = "aeron_async.h"

ALLOWED: dict[str, frozenset[str]] = {}


def _layer(name: str, *below: str) -> None:
    allowed = set(below)
    for layer in below:
        allowed |= ALLOWED[layer]
    ALLOWED[name] = frozenset(allowed)


_layer("util")
_layer("concurrent", "util")
_layer("logbuffer", "concurrent")
_layer("agent", "concurrent")
_layer("uri", "util")
_layer("protocols", "logbuffer", "uri")
_layer("resolver", "protocols", "uri")
_layer("media", "resolver")
_layer("strategy", "media", "agent")
_layer("driver", "strategy")
_layer("client", "protocols", "agent")
_layer("archive", "client")
_layer("api", "driver", "client", "archive")
ALLOWED["python"] = frozenset({"api", "client"} | ALLOWED["client"])   # the CPython extension
ALLOWED["tests"] = frozenset(ALLOWED) | {"api"}                           # C tests may include anything

# layers whose .c files define functions that aeron_async.h declares
IMPLEMENTS_API = frozenset({"client", "driver", "archive", "strategy"})

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def generated_headers() -> frozenset[str]:
    """What the build generates under the include root before compiling (the archive codecs' layouts,
    _native/gen_codecs.py): named like any header, present only once something has built."""
    spec = importlib.util.spec_from_file_location("aa_gen_codecs", ROOT / "_native" / "gen_codecs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return frozenset(module.OUTPUTS)


def source_files(root: pathlib.Path = ROOT) -> list[pathlib.Path]:
    found = []
    for folder in ("_native/src", "_native/python", "_native/tests", "protocols", "media"):
        for path in (root / folder).rglob("*"):
            # the links under _native/src are walked once, through the real folders
            if path.suffix in (".c", ".h") and not any((root / p).is_symlink() for p in path.relative_to(root).parents):
                found.append(path)
    return sorted(set(found))


def layer_of_file(path: pathlib.Path, root: pathlib.Path = ROOT) -> str:
    rel = path.relative_to(root).parts
    if rel[0] in ("protocols", "media"):
        return rel[0]
    if rel[:2] == ("_native", "src"):
        return "api" if len(rel) == 3 else rel[2]      # files at the root: the public API
    return {"python": "python", "tests": "tests"}[rel[1]]


def violations(root: pathlib.Path = ROOT) -> list[str]:
    """Every include that breaks the rules above, as "file:line: #include ...: why"."""
    include_root = root / "_native" / "src"
    generated = generated_headers()
    problems = []
    for path in source_files(root):
        own = layer_of_file(path, root)
        rel = path.relative_to(root)
        for number, line in enumerate(path.read_text().splitlines(), 1):
            match = INCLUDE.match(line)
            if match is None:
                continue
            name = match.group(1)
            where = f"{rel}:{number}: #include \"{name}\""
            if ".." in pathlib.PurePosixPath(name).parts:
                problems.append(f"{where}: climbs out with ../; name the header from _native/src")
                continue
            if "/" not in name and not (include_root / name).is_file():
                if own in ("tests", "python") and (path.parent / name).exists():
                    continue            # a C test's or the extension's own header, beside it
                problems.append(f"{where}: name the header from the include root (\"<layer>/{name}\")")
                continue
            if not (include_root / name).exists() and name not in generated:
                problems.append(f"{where}: no such header under _native/src")
                continue
            target = name.split("/")[0] if "/" in name else "api"
            if target == own:
                continue
            if target == "api" and own in IMPLEMENTS_API and path.suffix == ".c":
                continue
            if target not in ALLOWED.get(own, frozenset()):
                problems.append(f"{where}: layer '{own}' may not include layer '{target}' "
                                f"(allowed: {', '.join(sorted(ALLOWED.get(own, ()))) or 'none'}; _native/layers.py)")
    return problems


if __name__ == "__main__":
    found = violations()
    print("\n".join(found) if found else "layers: no violation")
    sys.exit(1 if found else 0)
