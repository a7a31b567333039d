"""In-network aggregation (INC) endpoints: the frames of p4src/include/inc_headers.p4, seeded vectors, and the
per-rank state machine that streams chunks into the switches and checks the sums that come back."""
