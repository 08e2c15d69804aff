"""The barrier protocol model shared by `derive-barriers` and `verify-safety`.

Modules, each importing only those above it:

* exprs.py: scalar expressions (SSA integers as closures over an environment, intervals).
* model.py: declarations (roles, barriers, views, accumulators, instructions, findings) and
  the `Kernel` model with its trip-count symbols and assignments.
* trace.py: the tracer of one role, the exploration of every assignment, `model_of`.
* accounting.py: first-wait-free barriers, role checks, arrival accounting.
* parity.py: the parity of every wait.
* simulate.py: the abstract mbarrier machine (`Simulation`, `simulate_all`).
"""
