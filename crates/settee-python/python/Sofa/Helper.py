"""`Sofa.Helper`: SOFA's messages (printed on the console as SOFA prints them)."""
import sys as _sys


def GetVersion():
    return "v25.12"


def _emit(level, args):
    if len(args) == 1:
        emitter, message, where = "PythonScript", args[0], ""
    elif len(args) == 2:
        emitter, message, where = args[0], args[1], ""
    elif len(args) == 3:
        emitter, message, where = "PythonScript", args[0], "   %s:%s" % (args[1], args[2])
    elif len(args) == 4:
        emitter, message, where = args[0], args[1], "   %s:%s" % (args[2], args[3])
    else:
        raise TypeError("msg_%s takes (message), (emitter, message), (message, file, line) or (emitter, message, file, line)" % level.lower())
    if not isinstance(emitter, str):
        emitter = emitter.getName() if hasattr(emitter, "getName") else str(emitter)
    stream = _sys.stdout if level == "INFO" else _sys.stderr
    print("[%s] [%s] %s%s" % (level, emitter, message, where), file=stream)


def msg_info(*args):
    _emit("INFO", args)


def msg_warning(*args):
    _emit("WARNING", args)


def msg_error(*args):
    _emit("ERROR", args)


def msg_deprecated(*args):
    _emit("DEPRECATED", args)


def msg_fatal(*args):
    _emit("FATAL", args)


class _FileRepository:
    """SOFA's DataRepository: directories searched for data files."""

    def __init__(self, paths=None):
        self._paths = list(paths or [])

    def addFirstPath(self, path):
        self._paths.insert(0, path)
        import _settee
        _settee.add_data_path(path)

    def addLastPath(self, path):
        self._paths.append(path)
        import _settee
        _settee.add_data_path(path)

    def getPaths(self):
        import _settee
        return self._paths + [p for p in _settee.data_path() if p not in self._paths]

    def findFile(self, filename, basedir="", errlog=None):
        import os
        for d in ([basedir] if basedir else []) + self.getPaths():
            if os.path.exists(os.path.join(d, filename)):
                return True
        return os.path.exists(filename)

    def getFile(self, filename, basedir="", errlog=None):
        import os
        for d in ([basedir] if basedir else []) + self.getPaths():
            p = os.path.join(d, filename)
            if os.path.exists(p):
                return p
        return filename


class System:
    DataRepository = _FileRepository()
    PluginRepository = _FileRepository()
