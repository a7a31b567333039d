"""p4exec's native pipeline: the same P4 program compiled to C from the typed IR (cgen.py), built with the
system C compiler through cffi (build.py), run with the Python runtime objects as the one store of control-plane
state (tables.py keeps C lookup indexes of them). The Python pipeline stays the reference."""
