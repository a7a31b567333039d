"""The P4 programs (`*.p4`, `include/*.p4`) and, in `p4src.wire`, the wire constants Python code shares with them."""
