"""The benchmarks of `make bench` (tools/bench): run.py runs the groups and writes the table,
icount.py counts guest instructions, wallclock.py times on the host's clock, figures.py holds
a figure with its runs and target. The README's "Benchmarks" section explains the figures."""
