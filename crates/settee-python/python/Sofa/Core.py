"""`Sofa.Core`: the scene graph's classes, backed by Settee's engine."""
from _settee import (Base, Node, Object, Data, DataContainer, DataString, DataVectorString,
                     Link, LinkPath, Controller, NodeSequence, BaseMeshTopology)


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


DataEngine = _not_in_settee("DataEngine")
ForceFieldVec3d = _not_in_settee("ForceFieldVec3d")
ForceFieldVec1d = _not_in_settee("ForceFieldVec1d")
ForceFieldRigid3d = _not_in_settee("ForceFieldRigid3d")
RawPrefab = _not_in_settee("RawPrefab")

