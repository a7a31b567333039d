"""The ETH+ link layer below the P4 pipeline: link errors (FCS), link-level retry (LLR), and flow control
(PFC, CBFC). Written once against `traffic.scheduler.Scheduler`-style timers and used by the switch loop and
the host NIC model in both clocks. This package imports nothing else of the project, so every layer may use it.
"""

from linklayer.config import CbfcConfig, LinkLayerConfig, LinkLayerError, LlrConfig, PfcConfig

__all__ = ["CbfcConfig", "LinkLayerConfig", "LinkLayerError", "LlrConfig", "PfcConfig"]
