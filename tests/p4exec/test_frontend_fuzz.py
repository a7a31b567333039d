"""Fuzz the frontend and checker: no input makes `p4exec compile` fail with anything but a located P4 error.

In-suite the run is short (max_examples); bench/fuzz_frontend.py runs the same strategies for >= 10,000 cases.
"""
from __future__ import annotations

from hypothesis import HealthCheck, given, settings

from tests.p4exec.p4fuzz import check_compile, mutated_programs, token_streams

FAST = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow], database=None)


@FAST
@given(token_streams())
def test_random_token_streams(text: str) -> None:
    check_compile(text)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow], database=None)
@given(mutated_programs())
def test_mutated_valid_programs(text: str) -> None:
    check_compile(text)
