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
from Sofa.prefab import Prefab

__version__ = "25.12"
__all__ = ["Core", "Simulation", "Helper", "Types", "constants", "prefab", "Prefab", "PrefabBuilder", "msg_info", "msg_warning", "msg_error", "msg_deprecated"]


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


def PrefabBuilder(build):
    """Makes a prefab of a function `build(self, <parameters>)`: calling the result builds a
    node (a `Sofa.Core.RawPrefab`) whose parameters are the function's arguments after `self`,
    given as keywords or left to their defaults, and whose content `build` adds."""
    defined_at = _caller_of(_inspect.currentframe())
    spec = _inspect.getfullargspec(build)
    names = [a for a in spec.args if a != "self"]
    defaults = dict(zip(spec.args[len(spec.args) - len(spec.defaults or ()):], spec.defaults or ()))

    class _Built(Sofa.Core.RawPrefab):
        def doReInit(self):
            if not self._valid:
                return
            try:
                missing = [n for n in names if self.getData(n) is None]
                if missing:
                    raise TypeError("no value for %s" % ", ".join(missing))
                build(self, **{n: self.getData(n).value for n in names})
            except Exception as e:
                self._valid = False
                Sofa.Helper.msg_error(self, "the prefab %s could not be built: %s" % (build.__name__, e))

    def make(*args, **kwargs):
        kwargs.setdefault("name", build.__name__)
        node = _Built(*args, **kwargs)
        node._valid = True
        node.setDefinitionSourceFileName(defined_at[0])
        node.setDefinitionSourceFilePos(defined_at[1])
        node.setSourceTracking(defined_at[0])
        node.addData(name="prefabname", value=build.__name__, type="string", help="The prefab's name", group="Infos")
        node.addData(name="docstring", value=build.__doc__ or "", type="string", help="The prefab's documentation", group="Infos")
        # The arguments with a default become the prefab's parameters (typed after the
        # default); one without a default makes the build fail with a message, as in SOFA.
        for n, default in defaults.items():
            node.addPrefabParameter(name=n, help="parameter of " + build.__name__, type=_data_type_of(default), default=kwargs.get(n, default))
        node.init()
        return node

    make.__original__ = build
    make.__name__ = build.__name__
    make.__doc__ = build.__doc__
    return make


def _caller_of(frame):
    caller = frame.f_back
    return _os.path.abspath(caller.f_code.co_filename), caller.f_lineno


def _data_type_of(value):
    """The Data type a prefab parameter gets from its value."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "double"
    if isinstance(value, str):
        return "string"
    return "vector<double>" if isinstance(value, (list, tuple)) and all(isinstance(v, (int, float)) for v in value) else "string"
