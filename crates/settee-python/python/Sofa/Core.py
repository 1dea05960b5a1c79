"""`Sofa.Core`: the scene graph's classes, backed by Settee's engine."""
from _settee import (Node, Object, Data, DataContainer, DataString, DataVectorString,
                     LinkPath, Controller, NodeSequence, DataEngine, ForceFieldVec3d,
                     ForceFieldVec2d, ForceFieldVec1d, ForceFieldVec6d, ForceFieldRigid3d,
                     ForceFieldRigid2d)

Base = Object


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
