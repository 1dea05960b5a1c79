"""`Sofa.Prefab`: a reusable piece of scene written as a Python class (spec python.md §5.4).

A prefab is a node. Its class lists its parameters (`prefabParameters`) and its extra Data
(`prefabData`), each a dict with `name`, `type`, `help` and an optional `default`; keywords
given to the constructor override the defaults. The constructor then calls `init()`, where
the subclass builds the prefab's content with `self.addObject` / `self.addChild`.

    class Arm(Sofa.Prefab):
        prefabParameters = [{"name": "length", "type": "double", "help": "arm length", "default": 1.0}]

        def init(self):
            self.addObject("MechanicalObject", position=[[0, 0, 0], [self.length.value, 0, 0]])

    root.addChild(Arm(name="arm", length=2.0))
"""
import inspect
import os

import Sofa.Core
import Sofa.Helper

__all__ = ["Prefab"]


def _location(frame):
    info = inspect.getframeinfo(frame)
    return os.path.abspath(info.filename), info.lineno


class Prefab(Sofa.Core.RawPrefab):
    """Base class of prefabs: subclass it, list `prefabParameters`, build the content in
    `init()`. The keywords `parent` (a node) and `parents` (a list of nodes) attach the prefab
    before `init()` runs, so that paths can be resolved while it builds."""

    def __init__(self, *args, **kwargs):
        Sofa.Core.RawPrefab.__init__(self, *args, **kwargs)

        # Where the class was written (the subclass's __init__ calling this one) and where the
        # prefab was made (its caller), for messages.
        caller = inspect.currentframe().f_back
        file, line = _location(caller)
        self.setDefinitionSourceFileName(file)
        self.setDefinitionSourceFilePos(line)
        self.setSourceTracking(file)
        if caller.f_back is not None:
            file, line = _location(caller.f_back)
            self.setInstanciationSourceFileName(file)
            self.setInstanciationSourceFilePos(line)

        if "name" not in kwargs:
            self.setName(type(self).__name__)
        self.addData("prefabname", value=type(self).__name__, type="string", group="Infos", help="Name of the prefab")

        self._attach_to_parents(kwargs)

        doc = ""
        if hasattr(self, "prefabParameters"):
            doc += "Prefab's parameters:"
            for p in self.prefabParameters:
                self.addPrefabParameter(name=p["name"], type=p["type"], help=p["help"],
                                        default=kwargs.get(p["name"], p.get("default")))
                doc += self._describe(p)
        if hasattr(self, "prefabData"):
            doc += "Prefab's data:"
            for p in self.prefabData:
                self.addData(name=p["name"], type=p["type"], help=p["help"],
                             value=kwargs.get(p["name"], p.get("default")), default=p.get("default"),
                             group=p.get("group", "Property"))
                doc += self._describe(p)
        if hasattr(self, "properties"):
            Sofa.Helper.msg_deprecated(self, "'properties' is the old name of 'prefabParameters': rename it")
            doc += "Prefab's (properties):"
            for p in self.properties:
                self.addPrefabParameter(name=p["name"], type=p["type"], help=p["help"],
                                        default=kwargs.get(p["name"], p.get("default")))
                doc += self._describe(p)
        self.addData("docstring", value=(self.__doc__ or "") + doc, type="string", group="Infos",
                     help="Documentation of the prefab")

        self.init()

    @staticmethod
    def _describe(p):
        return "\n  %s (%s): %s [default: %s]" % (p["name"], p["type"], p["help"], p.get("default", ""))

    def _attach_to_parents(self, kwargs):
        has_parent, has_parents = "parent" in kwargs, "parents" in kwargs
        if has_parent and has_parents:
            Sofa.Helper.msg_error(self, "a prefab takes either 'parent' (one node) or 'parents' (a list of nodes), not both")
        elif has_parent:
            if isinstance(kwargs["parent"], Sofa.Core.Node):
                kwargs["parent"].addChild(self)
            else:
                Sofa.Helper.msg_error(self, "the keyword 'parent' of a prefab is reserved for the node it is attached to")
        elif has_parents:
            if isinstance(kwargs["parents"], list):
                for parent in kwargs["parents"]:
                    if isinstance(parent, Sofa.Core.Node):
                        parent.addChild(self)
                    else:
                        Sofa.Helper.msg_error(self, "the keyword 'parents' of a prefab is reserved for the nodes it is attached to: %r is not a node" % (parent,))
            else:
                Sofa.Helper.msg_error(self, "the keyword 'parents' of a prefab is reserved for a list of the nodes it is attached to")
