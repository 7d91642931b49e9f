"""Helpers shared by the tests: drivers in other processes (procs/), archive and Spark fixtures,
flow-control scenarios, name resolvers written in Python. (tests/conftest.py has the fixtures and
the small helpers every test uses.)"""
