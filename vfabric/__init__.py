"""vfabric: a discrete-event, virtual-time fabric running the same compiled P4, controller and workloads.

Emulation (p4exec switch processes on veths) runs in wall-clock time on shared cores, so link rates are
scaled down and reruns disagree. Here every switch runs the same compiled v1model pipeline and the same
traffic manager (`p4exec.switch.tm`, on the simulator's clock), hosts replay the same planned collectives
with the same congestion reactions, links have nominal rates and propagation delays, and time is an
integer nanosecond counter advanced only by events: a run is as fast as the CPU allows and bit-identical
when repeated. The fabric controller installs the tables over real P4Runtime gRPC while time stands still.
"""
