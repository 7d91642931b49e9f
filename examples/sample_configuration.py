"""What `async_publisher.py` and `async_subscriber.py` share, as Aeron's samples share their
SampleConfiguration: the stream they meet on and the command line that names it.

    --count N  --channel CHANNEL  --stream ID  --aeron-dir DIR  --timeout S  --backend asyncio|trio
"""

from __future__ import annotations

import argparse
import os

# $AERON_DIR when set (as every aeron tool takes it), else a directory of the examples' own
DEFAULT_DIR = os.environ.get("AERON_DIR") or "/dev/shm/aeron-async-examples"


def stream_arguments(description: str | None) -> argparse.ArgumentParser:
    """A command line with the shared options; an example adds its own before parsing."""
    parser = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--count", type=int, default=10)
    parser.add_argument("--channel", default="aeron:ipc")
    parser.add_argument("--stream", type=int, default=1001)
    parser.add_argument("--aeron-dir", default=DEFAULT_DIR, help=f"the media driver's directory (default {DEFAULT_DIR}: "
                        "$AERON_DIR when set)")
    parser.add_argument("--timeout", type=float, default=60.0, help="give up after this many seconds")
    parser.add_argument("--backend", default="asyncio", choices=["asyncio", "trio"])
    return parser
