"""YAML topologies: the example, round trips of every built-in, and schema errors with the file named."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

import topologies
from topologies import TopologyError, build, load, load_yaml, to_yaml
from topologies.analysis import plane_diversity
from topologies.yaml_loader import from_dict, to_dict

EXAMPLE = Path(topologies.__file__).parent / "data" / "dualplane.yaml"


def test_example_loads():
    t = load(str(EXAMPLE))
    assert (t.name, len(t.switches), len(t.hosts), len(t.links), t.planes) == ("dualplane", 6, 4, 12, [0, 1])
    assert t.endpoints["gpu3"].eid == 40
    assert t.endpoints["gpu3"].interfaces[1].ipv4 == "10.1.0.40"
    assert t.nodes["b-spine"].radix == 8 and t.nodes["a-spine"].radix == 16
    assert t.neighbor("b-leaf1", 10).owner == "b-spine"
    assert next(ln for ln in t.links if ln.a.owner == "a-leaf0" and ln.b.owner == "a-spine").rate_gbps == 200
    assert t.links[0].delay_us == 1
    assert plane_diversity(t, 1).max_hops == 4


@pytest.mark.parametrize("name,params", [("erack", {"gpus": 8, "planes": 3}), ("upn", {"gpus": 24, "radix": 8}),
                                         ("hpn", {}), ("line", {}), ("leafspine", {"spines": 3})])
def test_round_trip(tmp_path, name, params):
    t = build(name, **params)
    f = tmp_path / "t.yaml"
    f.write_text(to_yaml(t))
    back = load_yaml(f)
    assert to_dict(back) == to_dict(t)
    assert [n.device_id for n in back.switches] == [n.device_id for n in t.switches]
    assert {h: ep.interfaces for h, ep in back.endpoints.items()} == {h: ep.interfaces for h, ep in t.endpoints.items()}


def _doc(**over):
    doc = {"name": "x", "hosts": ["h1", "h2"], "switches": [{"name": "s1", "radix": 2}],
           "links": [["h1", "s1"], "h2 s1"]}
    doc.update(over)
    return doc


def test_short_forms():
    t = from_dict(_doc())
    assert [str(ln) for ln in t.links] == ["h1:0<->s1:1", "h2:0<->s1:2"]


@pytest.mark.parametrize("over,msg", [
    ({"colour": 1}, "unknown key"),
    ({"links": [["h1", "s1"], ["h2", "s1"], ["h2", "s2"]]}, "no node 's2'"),
    ({"switches": [{"name": "s1", "radix": 1}]}, "radix 1 exceeded"),
    ({"links": [{"a": "h1", "b": "s1", "b_port": 1}, {"a": "h2", "b": "s1", "b_port": 1}]}, "port 1 reused"),
    ({"hosts": ["h1", {"name": "h2", "eid": 1}]}, "endpoint id 1 collision"),
    ({"links": [["h1", "s1"]]}, "host h2 has no link"),
    ({"links": [["h1"]]}, "exactly two node names"),
    ({"switches": [{"name": "s1", "radix": "lots"}]}, "bad value"),
    ({"links": [{"a": "h1"}]}, "missing key"),
])
def test_schema_errors_name_the_problem(over, msg):
    with pytest.raises(TopologyError, match=msg):
        from_dict(_doc(**over), "my.yaml")


def test_file_errors(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: [unclosed\n")
    with pytest.raises(TopologyError, match="not valid YAML"):
        load(str(bad))
    with pytest.raises(TopologyError, match="apply to built-ins only"):
        load(str(EXAMPLE), gpus=3)
    with pytest.raises(TopologyError, match="unknown topology"):
        load("nothing-here")
    with pytest.raises(TopologyError, match=str(tmp_path / "missing.yaml")):
        load(str(tmp_path / "missing.yaml"))


def test_dump_is_plain_yaml():
    doc = yaml.safe_load(to_yaml(build("line", n=2)))
    assert doc["links"][1] == {"a": "s1", "a_port": 2, "b": "s2", "b_port": 1, "rate_gbps": 10.0, "delay_us": 0.0}


def test_non_string_keys_are_named_not_a_crash() -> None:
    """`null:` and `7:` are YAML keys too: the error lists them instead of failing to sort them."""
    doc = yaml.safe_load("hosts: [h1]\nswitches: [s1]\nlinks: [[h1, s1]]\nnull: 1\n7: 2\n")
    with pytest.raises(TopologyError, match=r"unknown key\(s\) 7, None"):
        from_dict(doc)
