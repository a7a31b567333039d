"""The shared wording of unknown YAML keys."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from topologies.keys import unknown_keys

ALLOWED = {"rate_gbps", "delay_us"}
KEYS = st.one_of(st.sampled_from(sorted(ALLOWED)), st.text(max_size=6), st.integers(), st.none(), st.booleans())


def test_names_every_unknown_key_and_the_known_ones() -> None:
    assert unknown_keys({"rate_gbps": 1, "dealy_us": 2, None: 3, 7: 4}, ALLOWED) == (
        "unknown key(s) 7, None, dealy_us (known: delay_us, rate_gbps)")


def test_none_when_every_key_is_known() -> None:
    assert unknown_keys({"delay_us": 1}, ALLOWED) is None
    assert unknown_keys({}, ALLOWED) is None


@given(st.dictionaries(KEYS, st.integers(), max_size=6))
def test_any_yaml_keys_give_a_sentence_or_none(d: dict) -> None:
    msg = unknown_keys(d, ALLOWED)
    extra = [k for k in d if k not in ALLOWED]
    assert (msg is None) == (not extra)
    if msg is not None:
        assert all(str(k) in msg for k in extra)
