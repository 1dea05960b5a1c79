"""SofaPython3's `Sofa` package, on Settee.

Scene scripts written for SOFA import it unchanged: `Sofa.Core` (Node, Object, Data,
Controller), `Sofa.Simulation` (init, animate, load), `Sofa.Helper` (messages), `Sofa.Types`,
`Sofa.constants`, and the GUI modules as headless stubs.
"""
import inspect as _inspect
import os as _os
import sys as _sys

try:
    # `settee run` / `settee python`: the runner has put its native module in sys.modules.
    import _settee
except ImportError:
    # `pip install`: the extension module sits in this package (maturin puts it there); the
    # modules below import it by its top-level name.
    from Sofa import _settee
    _sys.modules["_settee"] = _settee

import Sofa.Helper
import Sofa.Core
import Sofa.Simulation
import Sofa.Types
import Sofa.constants
import SofaTypes

__version__ = "25.12"
__all__ = ["Core", "Simulation", "Helper", "Types", "constants", "msg_info", "msg_warning", "msg_error", "msg_deprecated"]


def GetVersion():
    return Sofa.Helper.GetVersion()


def _caller():
    frame = _inspect.currentframe().f_back.f_back
    return frame.f_code.co_filename, frame.f_lineno


def msg_info(target, message):
    Sofa.Helper.msg_info(target, message, *_caller())


def msg_warning(target, message):
    Sofa.Helper.msg_warning(target, message, *_caller())


def msg_error(target, message):
    Sofa.Helper.msg_error(target, message, *_caller())


def msg_deprecated(target, message):
    Sofa.Helper.msg_deprecated(target, message, *_caller())


def import_sofa_python_scene(path):
    """Executes a scene file as a module and returns it (to compose scenes)."""
    import importlib.util
    name = _os.path.splitext(_os.path.basename(path))[0]
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    if not hasattr(module, "createScene"):
        raise Exception("The file '%s' has no createScene function" % path)
    return module


_modules_at_import = set(_sys.modules)


def unloadModules():
    """Forgets the modules imported since `Sofa` was (scene modules are imported afresh)."""
    for name in list(_sys.modules):
        if name not in _modules_at_import and not name.startswith(("Sofa", "SofaRuntime", "_settee", "numpy")):
            del _sys.modules[name]
