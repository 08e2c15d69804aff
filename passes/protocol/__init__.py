"""The barrier protocol model shared by `derive-barriers` and `verify-safety`.

Modules, each importing only those above it:

* exprs.py: scalar expressions (SSA integers as closures over an environment, intervals).
* model.py: declarations (roles, barriers, views, accumulators, instructions, findings) and
  the `Kernel` model.
* launch.py: the launches explored (parameter, grid and block values) and how findings name them.
* tracekey.py: what a role's trace depends on (the keys under which a trace is reused).
* trace.py: the tracer of one role, the exploration of every launch, `model_of`.
* accounting.py: first-wait-free barriers, role checks, arrival accounting.
* parity.py: the parity of every wait.
* departure.py: the first wrong event behind a failure the simulation found.
* forks.py: which simulations of one exploration share a beginning (simulated once).
* simulate.py: the abstract mbarrier machine (`Simulation`, `simulate_all`).
"""
