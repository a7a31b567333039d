"""Experiments: specs, the runner that brings fabrics up and replays traffic, switch-side collection,
faults, plots and reports. The CLI commands (`ethlab traffic run`, `ethlab run`, `ethlab compare`) are thin
shells over these modules."""
