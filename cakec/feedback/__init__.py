"""The dynamic half of the loop: what an author (or an agent) gets back when a candidate runs
on the GPU. `run` gives one `RunReport` (docs/run.md); watchdog.py names hangs in the
schedule's terms, sanitize.py maps compute-sanitizer reports to .cake lines, record.py
writes reproducer bundles."""

from cakec.feedback.report import SCHEMA_VERSION, RunReport
from cakec.feedback.runner import run

__all__ = ["run", "RunReport", "SCHEMA_VERSION"]
