"""The C hashes of the native runtime (p4exec/native/runtime.c) against the runtime's Python ones, which stay the
reference (p4exec/runtime/hashes.py): over a field list's bytes and then a payload (`*_with_payload`), and the
`*_custom` CRCs with their default parameters, which the generated Python runs and the C maps to crc16/crc32."""
from __future__ import annotations

from importlib import resources

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from p4exec.native.build import build, compiler_available
from p4exec.runtime import hashes

pytestmark = pytest.mark.skipif(compiler_available() is None, reason="no C compiler on this machine")

_TWO = ("csum16", "xor16", "crc16", "crc32")
_CDEF = "".join(f"uint64_t t_{a}_2(const uint8_t *a, int na, const uint8_t *b, uint32_t nb);\n" for a in _TWO)


@pytest.fixture(scope="module")
def lib():
    src = resources.files("p4exec.native").joinpath("runtime.c").read_text()
    src += "".join(f"uint64_t t_{a}_2(const uint8_t *a, int na, const uint8_t *b, uint32_t nb) {{\n"
                   f"    if (!p4n_tabs_ready) p4n_tabs();\n    return p4n_{a}_2(a, na, b, nb);\n}}\n" for a in _TWO)
    return build(src, _CDEF).lib


@settings(max_examples=300, deadline=None)
@given(head=st.binary(max_size=40), payload=st.binary(max_size=200))
def test_two_part_hashes_equal_python_over_the_joined_bytes(lib, head: bytes, payload: bytes) -> None:
    for algo in _TWO:
        got = getattr(lib, f"t_{algo}_2")(head, len(head), payload, len(payload))
        assert got == hashes.hash_bytes(algo, head + payload), algo


@settings(max_examples=200, deadline=None)
@given(data=st.binary(max_size=64))
def test_custom_crcs_default_to_crc16_and_crc32(data: bytes) -> None:
    assert hashes.hash_bytes("crc16_custom", data) == hashes.crc16(data)
    assert hashes.hash_bytes("crc32_custom", data) == hashes.crc32(data)
