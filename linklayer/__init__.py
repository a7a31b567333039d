"""The ETH+ link layer below the P4 pipeline: link errors (FCS), link-level retry (LLR), and flow control
(PFC, CBFC). Written once against a timer (`now_ns`, `at`) and used by the switch loop and the host NIC model
in both clocks (linklayer/port.py documents the seam). This package imports nothing else of the project, so
every layer may use it.
"""

from linklayer.config import CbfcConfig, LinkLayerConfig, LinkLayerError, LlrConfig, PfcConfig
from linklayer.counters import COUNTER_NAMES, LinkCounters, run_totals
from linklayer.port import FlowGate, LinkPort, Wire

__all__ = ["COUNTER_NAMES", "CbfcConfig", "FlowGate", "LinkCounters", "LinkLayerConfig", "LinkLayerError",
           "LinkPort", "LlrConfig", "PfcConfig", "Wire", "run_totals"]
