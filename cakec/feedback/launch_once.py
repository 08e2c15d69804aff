"""One launch of a built candidate in a process of its own: what compute-sanitizer runs
(`cakec run --sanitize`), and what bench/reject_speed.py kills when a build without the
watchdog hangs. The bundle directory holds kernel.cubin, metadata.json and args.json
(the .cake path, shape, seed).

    python -m cakec.feedback.launch_once DIR
Prints `launch_once: ready` just before the launch (bench/reject_speed.py times from it).
Exit status: 0 launched and finished; 6 the watchdog stopped it (a hang); 5 a launch error.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def main(folder: str) -> int:
    import torch

    from cakec import api
    from cakec.runtime import Kernel

    d = Path(folder)
    args = json.loads((d / "args.json").read_text())
    meta = json.loads((d / "metadata.json").read_text())
    kernel = Kernel((d / "kernel.cubin").read_bytes(), meta)
    example = api.load_example(args["file"])
    torch.manual_seed(args["seed"])
    inputs = list(example.make_inputs(args["shape"], "cuda"))
    log = None
    if args.get("watchdog"):
        from cakec.feedback.watchdog import WatchdogLog

        log = WatchdogLog(kernel)
    kernel._load(torch.cuda.current_device())
    torch.cuda.synchronize()
    print("launch_once: ready", flush=True)  # what a caller times the launch from
    try:
        kernel(*inputs)
        torch.cuda.synchronize()
    except Exception as e:  # noqa: BLE001 - reported through the exit status
        print(f"launch_once: {type(e).__name__}: {e}", file=sys.stderr)
        return 5
    if log is not None and log.fired:
        print("launch_once: the watchdog stopped the kernel", file=sys.stderr)
        return 6
    print("launch_once: finished")
    return 0


def write(folder: Path, cubin: bytes, metadata: dict, file: str, shape: dict, seed: int,
          watchdog: bool) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "kernel.cubin").write_bytes(cubin)
    (folder / "metadata.json").write_text(json.dumps(metadata))
    (folder / "args.json").write_text(json.dumps({"file": str(Path(file).resolve()),
                                                  "shape": shape, "seed": seed,
                                                  "watchdog": watchdog}))
    return folder


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
