"""Regor's optimisation database read for the operators that transpose a partition's input, and
the manifest's record of them (``vela.partitions[*].input_transposes``)."""

from __future__ import annotations

import copy
import re
from pathlib import Path

import pytest

from tests.fake_compile import FakeCompile
from zoo import Zoo
from zoo.registry.npu.vela_layers import input_transposes, read_tables
from zoo.registry.store.manifest import Manifest

# Regor's tables as Vela 5.1.0 writes them (mnist's and mv2's, cut down): source 30 is an input
# TRANSPOSE run as two operators, the second fed by the first; source 40 a transpose inside the
# network; source 50 an input transpose Regor runs as a 1x1 pool.
DEBUG_DB = """<?xml version='1.0' encoding='UTF-8'?>
<debug source="/tmp/p0">
<table name="perf">
<![CDATA[
"id","source_id","optimised_id","operator","name","staging_usage","op_cycles","npu_cycles","mac_count"
175,30,70,"Transpose","#177",3136,56448,424,0
178,30,70,"Transpose","tosa_transpose_default",3136,56400,816,0
181,34,69,"Conv2D","tosa_clamp_default",1632,98064,15796,100352
185,40,68,"Transpose","tosa_transpose_default_1",80,588,236,0
189,50,67,"MaxPool","tosa_transpose_default_2",80,700,236,0
]]>
</table>
<table name="perf_debug_conn">
<![CDATA[
"id","input_op_id","input_index"
175,"-1",0
178,175,0
181,178,0
185,181,0
189,"-1",0
"-2",185,0
]]>
</table>
<table name="source">
<![CDATA[
"id","operator","kernel_w","kernel_h","ofm_w","ofm_h","ofm_d","ext_key"
30,"Transpose",1,1,7,32,7,30
34,"Conv2D",1,1,1,1,64,35
40,"Transpose",1,1,1,1,64,40
50,"Transpose",1,1,1,1,64,50
]]>
</table>
</debug>
"""


def test_the_input_transposes_are_every_operator_of_a_transpose_the_graph_input_feeds(tmp_path: Path) -> None:
    path = tmp_path / "p0_debug.xml"
    path.write_text(DEBUG_DB)
    assert input_transposes(read_tables(path)) == [
        {"operator": "Transpose", "cycles": 56448}, {"operator": "Transpose", "cycles": 56400},
        {"operator": "MaxPool", "cycles": 700},
    ]


def test_a_database_without_its_tables_says_which(tmp_path: Path) -> None:
    path = tmp_path / "p0_debug.xml"
    path.write_text(re.sub(r'<table name="source">.*?</table>', "", DEBUG_DB, flags=re.S))
    with pytest.raises(ValueError, match=r"p0_debug.xml has no source table"):
        read_tables(path)
    path.write_text(DEBUG_DB.replace('"op_cycles"', '"cycles"'))
    with pytest.raises(ValueError, match=r"not as zoo reads it: KeyError 'op_cycles'"):
        input_transposes(read_tables(path))


def test_a_build_records_them_per_partition(fake_compile: FakeCompile) -> None:
    m = Zoo().fetch("add", "u55-128").manifest
    assert m.vela is not None and m.vela["partitions"][0]["input_transposes"] == []


def test_the_schema_refuses_a_record_that_is_not_cycles(fake_compile: FakeCompile) -> None:
    data = copy.deepcopy(Zoo().fetch("add", "u55-128").manifest.to_json())
    data["vela"]["partitions"][0]["input_transposes"] = [{"operator": "Transpose", "cycles": "many"}]
    with pytest.raises(ValueError, match=r"field 'vela.partitions\[0\].input_transposes\[0\].cycles' should be an integer"):
        Manifest.from_json(data)
