"""Finding CUDA command-line tools (ptxas, cuobjdump, nvdisasm): on PATH, in the CUDA
toolkit folder, or inside the pip wheels (`nvidia-cuda-cuobjdump` installs its binary under
site-packages/nvidia/cu13/bin, which is not on PATH)."""

from __future__ import annotations

import shutil
from pathlib import Path


def find_tool(name: str) -> str | None:
    found = shutil.which(name) or shutil.which(name, path="/usr/local/cuda/bin")
    if found:
        return found
    try:
        import nvidia  # namespace package of the NVIDIA wheels
    except ImportError:
        return None
    for root in nvidia.__path__:
        for candidate in sorted(Path(root).glob(f"cu*/bin/{name}")):
            return str(candidate)
    return None
