"""The run report: what `cakec run --json` prints and `cakec.run(...)` returns, one document
per run with the stage reached and everything measured. docs/run.md is its schema
(docs/run.schema.json the machine-readable one); `SCHEMA_VERSION` changes with any field
that changes meaning.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

SCHEMA = "cake-run"
SCHEMA_VERSION = 1

#: The stages, in order; a report's `stage` is where it stopped ("done": every stage passed).
STAGES = ("usage", "verify", "emit", "compile", "launch", "hang", "numerics", "timing",
          "sanitize", "done")

#: Exit status of `cakec run` per stage that failed; 0 when done. 1 and 2 keep their meaning
#: of every other command (errors in the input, usage / environment problems).
EXIT_STATUS = {"done": 0, "verify": 1, "usage": 2, "emit": 3, "compile": 4, "launch": 5,
               "hang": 6, "numerics": 7, "timing": 5, "sanitize": 8}


@dataclass
class RunReport:
    """One run of one kernel. Sections of stages that did not run are None."""

    file: str
    stage: str = "usage"           # where the run stopped, "done" when every stage passed
    reason: str | None = None      # one line: why it stopped there
    kernel: str | None = None
    target: str | None = None
    shape: dict[str, int] | None = None
    unchecked: bool = False
    device: dict[str, Any] | None = None
    #: verify diagnostics and the run's own (CAKE-R*), as `verify --format json` objects
    diagnostics: list[dict] = field(default_factory=list)
    #: the gate diagnostics an `--unchecked` run was emitted despite (verify's verdict)
    rejected: list[dict] = field(default_factory=list)
    compile: dict[str, Any] | None = None
    watchdog: dict[str, Any] | None = None
    launch: dict[str, Any] | None = None
    hang: dict[str, Any] | None = None
    numerics: dict[str, Any] | None = None
    timing: dict[str, Any] | None = None
    speed_of_light: dict[str, Any] | None = None
    sanitizer: dict[str, Any] | None = None
    record: str | None = None      # the reproducer bundle written (`--record DIR`)
    #: whether the CUDA context is still usable by this process (False after a real hang)
    context_ok: bool = True

    @property
    def ok(self) -> bool:
        return self.stage == "done"

    @property
    def exit_status(self) -> int:
        """EXIT_STATUS of the stage; 2 when the GPU stages were skipped (no GPU here)."""
        if self.launch is not None and self.launch.get("skipped"):
            return 2
        return EXIT_STATUS[self.stage]

    def to_json(self) -> dict:
        return {"schema": SCHEMA, "version": SCHEMA_VERSION, **asdict(self), "ok": self.ok,
                "exit_status": self.exit_status}
