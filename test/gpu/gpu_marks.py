"""The marks every GPU test module carries: `gpu`, and a skip unless torch sees a GPU of the
compute capability the kernels under test run on."""

from __future__ import annotations

from collections.abc import Callable

import pytest


def gpu_marks(torch, capable: Callable[[tuple[int, int]], bool], reason: str) -> list:
    return [pytest.mark.gpu,
            pytest.mark.skipif(not torch.cuda.is_available()
                               or not capable(torch.cuda.get_device_capability()),
                               reason=reason)]
