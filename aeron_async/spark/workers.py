"""The Python that Spark's workers run (docs/spark.md, first section).

A Python data source is pickled by reference to its module: a worker whose Python lacks
`aeron_async` fails each task with a long traceback ending in `No module named 'aeron_async'`.
PySpark starts workers with `SparkContext.pythonExec`, taken from the environment variable
PYSPARK_PYTHON when the context starts, else `python3` from PATH: not the virtualenv's Python a
script runs from unless that virtualenv is activated. `use_this_python` makes it the calling
interpreter when neither PYSPARK_PYTHON nor `spark.pyspark.python` names one, and, for a local
master (the workers run on this host), checks that the workers' Python can import the package,
failing in one line that names both settings.
"""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

from ..errors import ConfigurationError

CONF_KEY = "spark.pyspark.python"
ENV_KEY = "PYSPARK_PYTHON"


def _conf(spark: Any, key: str) -> str | None:
    value = spark.sparkContext.getConf().get(key)
    return str(value) if value else None


def workers_python(spark: Any) -> tuple[str, str]:
    """(the workers' Python, where it comes from): spark.pyspark.python, else PYSPARK_PYTHON, else
    this interpreter."""
    configured = _conf(spark, CONF_KEY)
    if configured:
        return configured, CONF_KEY
    from_env = os.environ.get(ENV_KEY)
    if from_env:
        return from_env, ENV_KEY
    return sys.executable, "this interpreter"


def _imports_package(python: str) -> str | None:
    """None when `python` can import aeron_async.spark's dependencies, else why not (one line)."""
    probe = ("import importlib.util, sys; missing = [m for m in ('aeron_async', 'pyarrow') "
             "if importlib.util.find_spec(m) is None]; print(', '.join(missing)); sys.exit(1 if missing else 0)")
    try:
        done = subprocess.run([python, "-c", probe], capture_output=True, text=True, timeout=60,
                              check=False, cwd=os.path.abspath(os.sep))  # not this directory: a worker's is Spark's
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"it does not run ({exc})"
    if done.returncode == 0:
        return None
    lines = done.stderr.strip().splitlines()
    missing = done.stdout.strip() or (lines[-1] if lines else f"the probe's exit status {done.returncode}")
    return f"it cannot import {missing}"


def use_this_python(spark: Any, *, check: bool = True) -> str:
    """Point the session's Python workers at this interpreter unless PYSPARK_PYTHON or
    spark.pyspark.python already names one; with a local master, check that the workers' Python
    has the package (ConfigurationError, one line, otherwise). Returns the workers' Python."""
    context = spark.sparkContext
    python, source = workers_python(spark)
    if getattr(context, "pythonExec", None) != python:
        # the Python functions (data sources, UDFs) wrapped from now on carry it to the workers
        context.pythonExec = python
    if source == "this interpreter":
        os.environ[ENV_KEY] = python  # SparkContexts this process starts later take it too
    if check and str(context.master).startswith("local"):
        problem = _imports_package(python)
        if problem is not None:
            raise ConfigurationError(
                f"aeron data source: Spark's Python workers run {python} (from {source}) and {problem}: set "
                f"{ENV_KEY} or {CONF_KEY} to a Python that has aeron_async[spark] installed (this one is "
                f"{sys.executable})")
    return python
