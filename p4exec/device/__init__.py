"""The device layer: what a P4Runtime server serves, under it and not inside it.

`program.py` turns a pipeline config into a verified `Program` (the one loader, for a config pushed over
gRPC and for one given on a command line); `base.py` is the device contract (`P4RuntimeDevice`, the
Protocol the server relies on) and `DeviceBase`, the one implementation of what every device shares.
The devices themselves stand above: `p4exec.switch` (the switch process, the in-process device) and
vfabric's simulated switch.
"""
