"""The `link_layer` mapping: defaults change nothing, bad values are refused naming their key."""

import pytest

from linklayer import LinkLayerConfig, LinkLayerError


def test_default_is_inactive() -> None:
    assert not LinkLayerConfig.parse(None).active
    assert not LinkLayerConfig.parse({}).active


def test_full_mapping() -> None:
    cfg = LinkLayerConfig.parse({"frame_error_rate": 1e-3, "llr": {"ack_every": 4}, "flow_control": "cbfc",
                                 "cbfc": {"cell_bytes": 128, "credits": 64}})
    assert cfg.active and cfg.llr.enabled and cfg.llr.ack_every == 4
    assert cfg.cbfc.cell_bytes == 128 and cfg.cbfc.credits == 64
    assert cfg.frame_error_probability(1000) == 1e-3


def test_bit_error_rate_grows_with_length() -> None:
    cfg = LinkLayerConfig.parse({"bit_error_rate": 1e-9})
    assert cfg.frame_error_probability(64) < cfg.frame_error_probability(1500)
    assert cfg.frame_error_probability(1500) == pytest.approx(1500 * 8 * 1e-9, rel=1e-3)


@pytest.mark.parametrize("raw, key", [
    ({"frame_error_rate": -0.1}, "link_layer.frame_error_rate"),
    ({"frame_error_rate": 1.5}, "link_layer.frame_error_rate"),
    ({"flow_control": "xon"}, "link_layer.flow_control"),
    ({"flow_control": "cbfc", "cbfc": {"credits": 3}}, "link_layer.cbfc.credits"),
    ({"pfc": {"xoff_bytes": 1000, "xon_bytes": 2000}}, "link_layer.pfc.xon_bytes"),
    ({"llr": {"ack_evry": 3}}, "link_layer.llr"),
    ({"llr": "yes"}, "link_layer.llr"),
])
def test_bad_values_name_their_key(raw: dict, key: str) -> None:
    with pytest.raises(LinkLayerError) as err:
        LinkLayerConfig.parse(raw)
    assert str(err.value).startswith(key + ":")


def test_yaml_exponent_without_dot_is_a_number() -> None:
    """PyYAML reads `1e-6` as a string; the rate is plainly a number, so it is taken as one."""
    import yaml

    assert LinkLayerConfig.parse(yaml.safe_load("frame_error_rate: 1e-6")).frame_error_rate == 1e-6
    with pytest.raises(LinkLayerError, match="link_layer.frame_error_rate"):
        LinkLayerConfig.parse({"frame_error_rate": "often"})


def test_to_raw_round_trips_and_scaled_stretches_time() -> None:
    cfg = LinkLayerConfig.parse({"bit_error_rate": 1e-9, "llr": {"ack_every": 4}, "flow_control": "pfc",
                                 "pfc": {"priorities": [3], "watchdog_ns": 100}})
    assert LinkLayerConfig.parse(cfg.to_raw()) == cfg
    slow = cfg.scaled(1000)
    assert slow.llr.replay_timeout_ns == 1000 * cfg.llr.replay_timeout_ns and slow.llr.ack_every == 4
    assert slow.pfc.watchdog_ns == 100_000 and slow.cbfc.update_interval_ns == 1000 * cfg.cbfc.update_interval_ns
