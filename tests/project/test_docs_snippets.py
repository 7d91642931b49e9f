"""Every Python snippet of README.md and docs/*.md marked runnable runs as written, so none can rot.

The marker is an HTML comment on the line before the ```python fence (invisible once rendered):

    <!-- runnable -->                      the snippet is a whole program
    <!-- runnable: client_a, client_b -->  it uses names the text leaves to the reader: PRELUDES
                                           below gives them (an embedded driver and its clients)

Each runs in a fresh interpreter with $AERON_DIR a directory of its own (so `connect()` and
`MediaDriver.launch()` without a directory use it), the placeholder addresses of the text replaced
by loopback ones and the fixed ports by free ones, and must exit 0 within its bound."""

from __future__ import annotations

import glob
import os
import re
import shutil
import subprocess
import sys
from typing import NamedTuple

import pytest

from conftest import REPO, free_udp_port, new_aeron_dir, python_env

MARKER = re.compile(r"^<!-- runnable(?::(?P<names>[^>]*))? -->\n```python\n(?P<code>.*?)^```$", re.M | re.S)

# What a marker's names stand for: code run before the snippet, and after it (closing what it opened).
PRELUDES: dict[str, tuple[str, str]] = {
    "client": ("import os, aeron_async\n"
               "_driver = aeron_async.MediaDriver.launch(aeron_dir=os.environ['AERON_DIR'], dir_delete_on_shutdown=True)\n"
               "client = aeron_async.Aeron.connect(_driver.aeron_dir)\n",
               "client.close()\n_driver.close()\n"),
    # the two sides of a UDP channel: one driver on this host serves both
    "client_a": ("import os, aeron_async\n"
                 "_driver = aeron_async.MediaDriver.launch(aeron_dir=os.environ['AERON_DIR'], dir_delete_on_shutdown=True)\n"
                 "client_a = client_b = aeron_async.Aeron.connect(_driver.aeron_dir)\n",
                 "client_a.close()\n_driver.close()\n"),
    "client_b": ("", ""),
    "driver": ("import os, aeron_async\n"
               "_driver = aeron_async.MediaDriver.launch(aeron_dir=os.environ['AERON_DIR'], dir_delete_on_shutdown=True)\n",
               "_driver.close()\n"),
    # your own service registry, in the name resolver example
    "my_registry": ("my_registry = {'orders': '127.0.0.1'}\n", ""),
}
# Placeholder hosts of the text, and the loopback address each stands for here.
HOSTS = {"10.0.0.1": "127.0.0.1", "10.0.0.2": "127.0.0.2", "10.0.1.2": "127.0.1.2", "10.0.0.5": "127.0.0.1"}
DOCUMENTS = ["README.md", *sorted(os.path.relpath(p, REPO) for p in glob.glob(os.path.join(REPO, "docs", "*.md")))]


class Snippet(NamedTuple):
    document: str
    line: int
    names: tuple[str, ...]
    code: str


def snippets(document: str, text: str) -> list[Snippet]:
    found = []
    for match in MARKER.finditer(text):
        names = tuple(n.strip() for n in (match.group("names") or "").split(",") if n.strip())
        found.append(Snippet(document, text.count("\n", 0, match.start("code")) + 1, names, match.group("code")))
    return found


def all_snippets() -> list[Snippet]:
    out = []
    for document in DOCUMENTS:
        with open(os.path.join(REPO, document), encoding="utf-8") as f:
            out.extend(snippets(document, f.read()))
    return out


def program(snippet: Snippet, aeron_dir: str) -> str:
    """The snippet as a program: its preludes, its placeholders replaced, then the closings."""
    unknown = [n for n in snippet.names if n not in PRELUDES]
    assert not unknown, f"{snippet.document}:{snippet.line}: no prelude for {unknown}; PRELUDES has {sorted(PRELUDES)}"
    code = snippet.code
    for host, loopback in HOSTS.items():
        code = code.replace(host, loopback)
    ports: dict[str, str] = {}
    code = re.sub(r"(?<=:)(4\d{4})\b", lambda m: ports.setdefault(m.group(1), str(free_udp_port())), code)
    code = code.replace('"/dev/shm/aeron"', repr(aeron_dir))
    before = "".join(PRELUDES[n][0] for n in snippet.names)
    after = "".join(PRELUDES[n][1] for n in reversed(snippet.names))
    return before + code + after


def run(snippet: Snippet) -> None:
    aeron_dir = new_aeron_dir()
    try:
        result = subprocess.run([sys.executable, "-c", program(snippet, aeron_dir)], capture_output=True, text=True,
                                timeout=90, env={**python_env(), "AERON_DIR": aeron_dir}, cwd=REPO)
    finally:
        shutil.rmtree(aeron_dir, ignore_errors=True)
    assert result.returncode == 0, (f"{snippet.document}:{snippet.line}: the snippet failed:\n{snippet.code}\n"
                                    f"{result.stdout}{result.stderr}")


SNIPPETS = all_snippets()


@pytest.mark.parametrize("snippet", SNIPPETS, ids=[f"{s.document}:{s.line}" for s in SNIPPETS])
def test_a_runnable_snippet_runs(snippet: Snippet) -> None:
    run(snippet)


def test_the_documents_mark_their_runnable_snippets() -> None:
    """README.md's first steps, its UDP and archive snippets and docs/api.md's are marked."""
    by_document: dict[str, int] = {}
    for s in SNIPPETS:
        by_document[s.document] = by_document.get(s.document, 0) + 1
    assert by_document.get("README.md", 0) >= 4 and by_document.get(os.path.join("docs", "api.md"), 0) >= 3, by_document


def test_a_broken_snippet_fails() -> None:
    """The runner fails on a snippet that raises, and on one that names what no prelude gives."""
    text = "<!-- runnable -->\n```python\nimport aeron_async\naeron_async.no_such_function()\n```\n"
    (broken,) = snippets("broken.md", text)
    assert broken.line == 3
    with pytest.raises(AssertionError, match="broken.md:3: the snippet failed"):
        run(broken)
    (unknown,) = snippets("unknown.md", "<!-- runnable: elsewhere -->\n```python\npass\n```\n")
    with pytest.raises(AssertionError, match="no prelude for \\['elsewhere'\\]"):
        run(unknown)
