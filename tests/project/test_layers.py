"""The C code's layering (_native/layers.py): one include root, no include climbing out with ../,
and no include from a layer into one above it."""

import importlib.util
import pathlib
import shutil
import subprocess

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _layers():
    spec = importlib.util.spec_from_file_location("aa_layers", ROOT / "_native" / "layers.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_no_include_climbs_out_with_dot_dot():
    tracked = subprocess.run(["git", "ls-files", "*.c", "*.h"], cwd=ROOT, capture_output=True, text=True,
                             check=True).stdout.split()
    offenders = [f"{name}:{number}: {line.strip()}"
                 for name in tracked
                 for number, line in enumerate((ROOT / name).read_text().splitlines(), 1)
                 if line.lstrip().startswith("#") and "include" in line and '"../' in line.replace(" ", "")]
    assert len(tracked) > 150
    assert offenders == []


def test_every_include_follows_the_layers():
    layers = _layers()
    assert layers.source_files(), "the checker found no C file"
    assert layers.violations() == []


def test_the_include_root_links_the_top_level_folders():
    for name in ("protocols", "media"):
        link = ROOT / "_native" / "src" / name
        assert link.is_symlink() and link.resolve() == ROOT / name


def _tree(tmp_path):
    """A copy of the C tree to plant violations in."""
    for folder in ("_native/src", "_native/python", "_native/tests", "protocols", "media"):
        shutil.copytree(ROOT / folder, tmp_path / folder, symlinks=True)
    return tmp_path


def test_an_include_going_up_a_layer_is_caught(tmp_path):
    layers = _layers()
    root = _tree(tmp_path)
    frames = root / "protocols" / "aa_udp_frames.c"
    frames.write_text('#include "driver/aa_driver_context.h"\n' + frames.read_text())
    found = layers.violations(root)
    assert len(found) == 1
    assert "protocols/aa_udp_frames.c:1" in found[0]
    assert "layer 'protocols' may not include layer 'driver'" in found[0]


def test_climbing_out_a_header_named_from_its_folder_or_a_public_header_in_a_header_are_caught(tmp_path):
    layers = _layers()
    root = _tree(tmp_path)
    term = root / "_native" / "src" / "logbuffer" / "aa_term.c"
    term.write_text('#include "../util/aa_error.h"\n#include "aa_term.h"\n' + term.read_text())
    client = root / "_native" / "src" / "client" / "aa_client.h"
    client.write_text('#include "aeron_async.h"\n' + client.read_text())
    found = layers.violations(root)
    assert any("aa_term.c:1" in line and "../" in line for line in found)
    assert any("aa_term.c:2" in line and "include root" in line for line in found)
    assert any("aa_client.h:1" in line and "layer 'client' may not include layer 'api'" in line for line in found)
    assert len(found) == 3
