"""`Sofa.Core`: the scene graph's classes, backed by Settee's engine."""
from _settee import (Base, Node, Object, Data, DataContainer, DataString, DataVectorString,
                     Link, LinkPath, Controller, NodeSequence, BaseMeshTopology, DataEngine,
                     ForceFieldVec3d, ForceFieldVec2d, ForceFieldVec1d, ForceFieldVec6d,
                     ForceFieldRigid3d, ForceFieldRigid2d)


class DataDict(dict):
    """`x.__data__`: the Data of a node or a component, by name."""

    def __init__(self, owner):
        super().__init__((d.getName(), d) for d in owner.getDataFields())

BaseObject = Object


def _not_in_settee(name):
    class _Missing:
        def __init__(self, *args, **kwargs):
            raise NotImplementedError("Sofa.Core.%s is not implemented yet in Settee" % name)
    _Missing.__name__ = name
    return _Missing


RawPrefab = _not_in_settee("RawPrefab")


class ClassEntry:
    """A class of the component factory (`Sofa.Core.ObjectFactory.getComponent(name)`)."""

    def __init__(self, entry):
        self._entry = entry

    className = property(lambda self: self._entry["className"])
    description = property(lambda self: self._entry["description"])
    defaultTemplate = property(lambda self: self._entry["defaultTemplate"])
    templates = property(lambda self: set(self._entry["templates"]))
    # The SOFA module that registers the class (none for a class only Settee has).
    targets = property(lambda self: {self._entry["target"]} if self._entry["target"] else set())
    locations = property(lambda self: set())
    aliases = property(lambda self: [])
    authors = property(lambda self: "")
    license = property(lambda self: "")
    dataAlias = property(lambda self: {})

    def __repr__(self):
        return "<%s at %#x>" % (self.className, id(self))

    def __str__(self):
        templates = sorted(self.templates)
        text = ", ".join("'%s'%s" % (t, " (default)" if t == self.defaultTemplate else "") for t in templates)
        return ("Component '%s' \n  Description: %s\n  Authors: \n  Aliases: None\n  Templates: %s\n"
                "  Targets: %s\n  Locations: None") % (self.className, self.description, text or "None",
                                                   ", ".join(sorted(self.targets)) or "None")


class ObjectFactory:
    """Introspection of the component factory: every component class Settee has."""

    @staticmethod
    def _entries():
        import _settee
        return _settee.factory_entries()

    @staticmethod
    def getComponent(name):
        for e in ObjectFactory._entries():
            if e["className"] == name:
                return ClassEntry(e)
        return None

    @staticmethod
    def getComponentsFromTarget(target):
        return [ClassEntry(e) for e in ObjectFactory._entries() if e["target"] == target]

    @staticmethod
    def dump_json():
        """The factory as SOFA's `ObjectFactoryJson` writes it: one entry per class, with a creator
        per template holding its class description and its Data and links."""
        import json
        out = []
        for e in ObjectFactory._entries():
            creators = {}
            for t in (e["templates"] or [""]):
                creators[t] = {
                    "target": e["target"] or "targetCannotBeFound",
                    "class": {"className": e["className"], "templateName": t,
                              "categories": e["categories"]},
                    "object": {"data": e["data"], "link": e["link"]},
                }
            out.append({"className": e["className"], "description": e["description"], "creator": creators})
        return json.dumps(out)


class _Classes:
    """`ObjectFactory.components` and `ObjectFactory.targets`: read-only class attributes."""

    def __get__(self, obj, owner):
        return [ClassEntry(e) for e in ObjectFactory._entries()]


ObjectFactory.components = _Classes()
class _Targets:
    def __get__(self, obj, owner):
        return {e["target"] for e in ObjectFactory._entries() if e["target"]}


ObjectFactory.targets = _Targets()
