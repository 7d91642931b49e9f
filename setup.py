"""Builds the cffi extension; all other metadata lives in pyproject.toml."""

from setuptools import setup

setup(cffi_modules=["_native/build_ffi.py:ffibuilder"])
