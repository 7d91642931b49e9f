"""Run the benchmark harness from a checkout: the same as `aeron-async bench`.

    python examples/benchmarks/run.py --quick
    python examples/benchmarks/run.py --bench throughput --sizes 32 --rounds 3 --json bench.json

See docs/benchmarks.md for what is measured and the figures of the reference machine.
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from aeron_async.bench import main  # noqa: E402

if __name__ == "__main__":
    raise SystemExit(main())
