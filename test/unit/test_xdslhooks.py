"""cakec/xdslhooks.py: xDSL's `.irdl` module finder is built when an import first reaches it,
not when `xdsl.dialects` is imported, and then answers as xDSL's own."""

from __future__ import annotations

import json
import subprocess
import sys

_PROGRAM = r"""
import json, sys
import cakec
import xdsl.dialects.builtin, xdsl.dialects.arith
loader = sys.modules["xdsl.utils.dialect_loader"]
last = sys.meta_path[-1]
before = {"stub": "xdsl.utils.dialect_stub" in sys.modules,
          "abc": "importlib.abc" in sys.modules, "finder": type(last).__name__}
from xdsl.dialects import get_all_dialects
try:
    import cake_no_such_module
    failed = False
except ImportError:
    failed = True
real = last.real
print(json.dumps({**before, "failed": failed,
                  "real": type(real).__module__ + "." + type(real).__name__,
                  "same_dialects": real.get_all_dialects is get_all_dialects,
                  "class": loader.IRDLDialectFinder.__module__,
                  "hooks_left": [type(f).__name__ for f in sys.meta_path].count("_Finder")}))
"""


def test_the_irdl_finder_is_made_when_an_import_first_reaches_it() -> None:
    out = json.loads(subprocess.run([sys.executable, "-c", _PROGRAM], capture_output=True,
                                    text=True, check=True).stdout)
    assert out["finder"] == "_IRDLFinder" and not out["stub"] and not out["abc"]
    assert out["failed"] and out["real"] == "xdsl.utils.dialect_loader.IRDLDialectFinder"
    assert out["same_dialects"] and out["class"] == "xdsl.utils.dialect_loader"
    assert out["hooks_left"] == 0  # both hooked modules found: the finder left sys.meta_path
