"""Known-answer tests for BMv2-identical hashes and BMv2's field-list byte layout.

Vectors: the standard CRC catalogue check values (input "123456789"), and the expected outputs in BMv2's
own unit tests (tests/test_calculations.cpp in p4lang/behavioral-model: input bytes 0b b8 1f 90 etc.).
"""
from __future__ import annotations

import os

import pytest
from hypothesis import given
from hypothesis import strategies as st

from p4exec.runtime import hashes as H
from p4exec.runtime.hashes import CrcConfig

CHECK = b"123456789"
BMV2_IN = bytes([0x0B, 0xB8, 0x1F, 0x90])


def test_catalogue_check_values():
    assert H.crc16(CHECK) == 0xBB3D          # CRC-16/ARC: BMv2's crc16
    assert H.crc32(CHECK) == 0xCBF43926      # CRC-32/ISO-HDLC
    assert H.crc_ccitt(CHECK) == 0x29B1      # CRC-16/CCITT-FALSE
    cat = {  # (width, poly, init, xorout, refin/refout) -> check
        (16, 0x1021, 0x0000, 0x0000, False): 0x31C3,   # XMODEM
        (16, 0x8005, 0xFFFF, 0x0000, True): 0x4B37,    # MODBUS
        (16, 0x1021, 0x0000, 0x0000, True): 0x2189,    # KERMIT
        (16, 0x8005, 0x0000, 0xFFFF, True): 0x44C2,    # MAXIM
        (32, 0x04C11DB7, 0xFFFFFFFF, 0x00000000, False): 0x0376E6E7,  # MPEG-2
        (32, 0x04C11DB7, 0xFFFFFFFF, 0xFFFFFFFF, False): 0xFC891918,  # BZIP2
        (32, 0x1EDC6F41, 0xFFFFFFFF, 0xFFFFFFFF, True): 0xE3069283,   # CRC-32C
        (32, 0x04C11DB7, 0xFFFFFFFF, 0x00000000, True): 0x340BC6D9,   # JAMCRC
    }
    for (w, poly, init, xo, ref), check in cat.items():
        cfg = CrcConfig(w, poly, init, xo, ref, ref)
        assert H.crc(cfg, CHECK) == check, cfg
        assert H.crc_generic(cfg, CHECK) == check, cfg


def test_bmv2_unit_test_vectors():
    assert H.hash_bytes("crc16", BMV2_IN) == 0x5D8A
    assert H.hash_bytes("crcCCITT", BMV2_IN) == 0x5D75
    assert H.hash_bytes("crc32", BMV2_IN) == 0x005D6A6F
    assert H.hash_bytes("crc16_custom", BMV2_IN) == 0x5D8A   # default = crc16
    assert H.hash_bytes("crc32_custom", BMV2_IN) == 0x005D6A6F  # default = crc32
    xmodem = CrcConfig(16, 0x1021, 0x0000, 0x0000, False, False)
    assert H.hash_bytes("crc16_custom", BMV2_IN, xmodem) == 0xD9B5
    mpeg2 = CrcConfig(32, 0x04C11DB7, 0xFFFFFFFF, 0, False, False)
    assert H.hash_bytes("crc32_custom", BMV2_IN, mpeg2) == 0x125E1592
    assert H.hash_bytes("xor16", BMV2_IN) == 0x1428
    assert H.hash_bytes("xor16", BMV2_IN + b"\x5a") == 0x4E28
    assert H.hash_bytes("identity", bytes([1, 2, 3, 4, 5])) == 0x0102030405
    ipv4 = bytes.fromhex("450000730000400040110000c0a80001c0a800c7")  # Wikipedia IPv4 header example
    assert H.hash_bytes("cksum16", ipv4) == 0xB861
    assert H.hash_bytes("csum16", ipv4) == 0xB861


def test_field_list_packing_matches_bmv2_examples():
    # BMv2 test "WithConstantNonAligned": 4-bit 0, 16-bit 0xffff, 12-bit 0x9fd -> identity 0x0ffff9fd
    assert H.hash_fields("identity", [(0, 4), (0xFFFF, 16), (0x9FD, 12)]) == 0x0FFFF9FD
    # BMv2 test "Extra": f6=0x3d f8=0x3e f9=1 f9=0 -> identity 0xf4f80200
    assert H.hash_fields("identity", [(0x3D, 6), (0x3E, 8), (1, 9), (0, 9)]) == 0xF4F80200


def test_non_byte_multiple_pads_at_the_end():
    # 9 + 3 = 12 bits -> 2 bytes, the last 4 bits zero padding
    assert H.pack_fields([(0x1FF, 9), (0b101, 3)]) == bytes([0xFF, 0xD0])
    assert H.pack_fields([(1, 1)]) == b"\x80"
    assert H.pack_fields([]) == b""
    # values wider than their field are truncated to it
    assert H.pack_fields([(0x1FF, 8)]) == b"\xff"


def test_identity_keeps_first_eight_bytes():
    data = bytes(range(1, 11))
    assert H.identity(data) == 0x0102030405060708


def test_v1model_hash_base_and_max():
    fields = [(0x0A000001, 32), (0x0A000002, 32), (6, 8), (1234, 16), (80, 16)]
    h = H.hash_fields("crc16", fields)
    assert H.v1model_hash("crc16", 0, 1 << 16, fields, 16) == h
    assert H.v1model_hash("crc16", 5, 10, fields, 16) == 5 + h % 10
    assert H.v1model_hash("crc32", 0, 4, fields, 2) == H.hash_fields("crc32", fields) % 4
    # base + (h % max) is truncated to the destination width
    assert H.v1model_hash("identity", 250, 100, [(99, 8)], 8) == (250 + 99) & 0xFF
    # BMv2 treats max == 0 as 1: the result is the base
    assert H.v1model_hash("crc16", 7, 0, fields, 16) == 7


@given(st.binary(max_size=64))
def test_fast_routes_equal_bmv2_loop(data):
    assert H.crc16(data) == H.crc_generic(H.CRC16_DEFAULT, data)
    assert H.crc32(data) == H.crc_generic(H.CRC32_DEFAULT, data)
    cfg = CrcConfig(16, 0x8005, 0xFFFF, 0x0000, True, True)
    assert H.crc(cfg, data) == H.crc_generic(cfg, data)


def _csum_ref(data: bytes) -> int:
    if len(data) % 2:
        data += b"\x00"
    s = sum(int.from_bytes(data[i:i + 2], "big") for i in range(0, len(data), 2))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def test_csum16_against_rfc1071_reference():
    for n in range(0, 70):
        data = os.urandom(n)
        assert H.csum16(data) == _csum_ref(data)
    # a header with its checksum filled in sums to zero
    hdr = bytes.fromhex("45000073000040004011b861c0a80001c0a800c7")
    assert H.csum16(hdr) == 0


def test_unknown_algorithm():
    with pytest.raises(ValueError):
        H.hash_fields("md5", [(1, 8)])
    assert H.algorithm_width("crc32_custom") == 32 and H.algorithm_width("identity") == 64


def test_make_hasher_equals_hash_fields():
    fields = [(0xDEADBEEF, 32), (3, 2)]
    for algo in ("crc16", "crc32", "crc16_custom", "crc32_custom", "csum16", "xor16", "identity"):
        assert H.make_hasher(algo)(fields) == H.hash_fields(algo, fields)


def test_checksum_with_payload_appends_after_padded_fields():
    # UDP-style: pseudo header fields then the payload bytes
    fields = [(0x0A000001, 32), (0x0A000002, 32), (0, 8), (17, 8), (12, 16)]
    payload = bytes.fromhex("0035003500080000deadbeef")
    assert H.hash_fields("csum16", fields, payload=payload) == _csum_ref(H.pack_fields(fields) + payload)
    # a 4-bit field list is padded to one byte before the payload
    assert H.hash_fields("identity", [(0xA, 4)], payload=b"\x01") == 0xA001


@given(st.lists(st.binary(max_size=40), min_size=1, max_size=30))
def test_crc16_memo_agrees_with_the_computation(inputs: list[bytes]) -> None:
    """crc16 remembers recent inputs (flows repeat); a remembered answer equals a fresh computation, for
    bytes, bytearray and memoryview alike, and the memo stays bounded."""
    from p4exec.runtime import hashes

    for data in inputs + inputs:
        want = hashes._crc16_compute(data)
        assert hashes.crc16(data) == want
        assert hashes.crc16(bytearray(data)) == want and hashes.crc16(memoryview(data)) == want
    assert len(hashes._CRC16_MEMO) <= hashes._MEMO_MAX
