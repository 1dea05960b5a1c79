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
    component = None
    if not isinstance(emitter, str):
        component = emitter
        emitter = emitter.getName() if hasattr(emitter, "getName") else str(emitter)
    stream = _sys.stdout if level == "INFO" else _sys.stderr
    print("[%s] [%s] %s%s" % (level, emitter, message, where), file=stream)
    if component is not None and hasattr(component, "_log_message"):
        component._log_message(_KINDS[level], str(message))
    for h in list(_handlers):
        h.process({"type": _KINDS[level], "sender": emitter, "component": component, "message": message})


_KINDS = {"INFO": "Info", "WARNING": "Warning", "ERROR": "Error", "DEPRECATED": "Deprecated", "FATAL": "Fatal"}
_handlers = []


class MessageHandler:
    """Receives every message while installed (`with Handler() as h:`): `process(msg)` gets a dict
    with `type` (`Info`, `Warning`, …), `sender`, `component` (the emitting object, or `None`)
    and `message`."""

    def __init__(self):
        pass

    def process(self, msg):
        pass

    def __enter__(self):
        _handlers.append(self)
        return self

    def __exit__(self, *exc):
        if self in _handlers:
            _handlers.remove(self)
        return False


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


class FileRepository:
    """SOFA's FileRepository: an ordered list of directories searched for files. Built from an
    environment variable, it starts with that variable's directories (`os.pathsep`-separated)."""

    def __init__(self, envVar=None, relativePath=None, paths=None):
        import os
        self._paths = list(paths or [])
        if envVar and os.environ.get(envVar):
            for p in os.environ[envVar].split(os.pathsep):
                if p and p not in self._paths:
                    self._paths.append(os.path.join(p, relativePath) if relativePath else p)

    def addFirstPath(self, path):
        self._paths.insert(0, path)

    def addLastPath(self, path):
        self._paths.append(path)

    def removePath(self, path):
        import os
        target = os.path.normpath(path)
        self._paths = [p for p in self._paths if os.path.normpath(p) != target]

    def clear(self):
        self._paths = []

    def getPaths(self):
        return list(self._paths)

    def getPathsJoined(self):
        import os
        return os.pathsep.join(self.getPaths())

    def findFile(self, filename, basedir="", errlog=None):
        return self._find(filename, basedir) is not None

    def getFile(self, filename, basedir="", errlog=None):
        found = self._find(filename, basedir)
        return found if found is not None else filename

    def _find(self, filename, basedir):
        import os
        if os.path.isabs(filename):
            return filename if os.path.exists(filename) else None
        for d in ([basedir] if basedir else []) + self.getPaths():
            p = os.path.join(d, filename)
            if os.path.exists(p):
                return p
        return filename if os.path.exists(filename) else None


class _EngineRepository(FileRepository):
    """The DataRepository: its directories are also those the engine searches for meshes."""

    def addFirstPath(self, path):
        super().addFirstPath(path)
        import _settee
        _settee.add_data_path(path)

    def addLastPath(self, path):
        super().addLastPath(path)
        import _settee
        _settee.add_data_path(path)

    def getPaths(self):
        import _settee
        return self._paths + [p for p in _settee.data_path() if p not in self._paths]


class System:
    FileRepository = FileRepository
    DataRepository = _EngineRepository()
    PluginRepository = FileRepository()
