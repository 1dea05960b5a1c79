"""`Sofa.Core`: the scene graph's classes, backed by Settee's engine."""
from _settee import (Base, Node, Object, Data, DataContainer, DataString, DataVectorString,
                     Link, LinkPath, Controller, NodeSequence, BaseMeshTopology, DataEngine,
                     PointSetTopologyModifier,
                     ForceFieldVec3d, ForceFieldVec2d, ForceFieldVec1d, ForceFieldVec6d,
                     ForceFieldRigid3d, ForceFieldRigid2d)
import _settee
# `Mapping_<In>_<Out>`: the pairs SofaPython3 binds.
for _name in _settee.MAPPING_CLASSES:
    globals()[_name] = getattr(_settee, _name)
del _name


class DataDict(dict):
    """`x.__data__`: the Data of a node or a component, by name."""

    def __init__(self, owner):
        super().__init__((d.getName(), d) for d in owner.getDataFields())

BaseObject = Object


class BasePrefab(Node):
    """A node built by a script (SofaPython3's `BasePrefab`): see `RawPrefab` and `Sofa.Prefab`."""

    def __new__(cls, *args, **kwargs):
        # Only the name reaches the node: the other keywords are the prefab's parameters.
        name = kwargs.get("name", args[0] if args and isinstance(args[0], str) else "unnamed")
        return Node.__new__(cls, name)


class RawPrefab(BasePrefab):
    """SofaPython3's `Sofa.Core.RawPrefab`: a node whose content a script builds.

    Keywords naming a Data of the node set it; the others are left to the subclass. `init()`
    empties the node and calls the subclass's `doReInit()`, which builds the content.
    """

    def __init__(self, *args, **kwargs):
        for key, value in kwargs.items():
            if key == "name":
                self.name.value = value
            elif self.findData(key) is not None:
                setattr(self, key, value)
        self._prefab_sources = {}

    def addPrefabParameter(self, name, help, type, default=None):
        """Adds a parameter of the prefab: a Data of group "Prefab's properties", unless the
        node already has a Data or a link of that name."""
        if self.findData(name) is None and self.findLink(name) is None:
            self.addData(name=name, value=default, help=help, group="Prefab's properties", type=type)

    # Where the prefab's class is defined and where it was instantiated (for messages). SOFA
    # also watches the defining file to rebuild the prefab when it changes, which only a GUI
    # session uses: Settee records the file.
    def setSourceTracking(self, filename):
        self._prefab_sources["tracked"] = filename

    def setDefinitionSourceFileName(self, filename):
        self._prefab_sources["definition"] = filename

    def setDefinitionSourceFilePos(self, line):
        self._prefab_sources["definitionPos"] = line

    def setInstanciationSourceFileName(self, filename):
        self._prefab_sources["instanciation"] = filename

    def setInstanciationSourceFilePos(self, line):
        self._prefab_sources["instanciationPos"] = line

    def getDefinitionSourceFileName(self):
        return self._prefab_sources.get("definition", "")

    def getDefinitionSourceFilePos(self):
        return self._prefab_sources.get("definitionPos", 0)

    def getInstanciationSourceFileName(self):
        return self._prefab_sources.get("instanciation", "")

    def getInstanciationSourceFilePos(self):
        return self._prefab_sources.get("instanciationPos", 0)

    def init(self):
        """SOFA's `Prefab::init`: the node is emptied, then rebuilt by `doReInit()`."""
        self.reinit()

    def reinit(self):
        for child in list(self.children):
            self.removeChild(child)
        for obj in list(self.objects):
            self.removeObject(obj)
        self.doReInit()

    def doReInit(self):
        pass


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
