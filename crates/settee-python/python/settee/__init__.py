"""Settee's own Python API, beyond SofaPython3's: copies of a whole scene.

`snapshot(root)` keeps the scene's whole state (positions, velocities, solver warm starts,
contacts, topology); `restore(root, snap)` goes back to it, and the run continues bit for bit
as it did the first time; `clone(root)` makes an independent scene (its own root node) that can
be run on its own. Copies are made between steps. A Python controller is the script's: a
restore keeps the same Python object, and a scene with one cannot be cloned.
"""
import Sofa  # noqa: F401  (registers the native module `_settee`, runner or wheel)
import _settee

Snapshot = _settee.Snapshot
snapshot = _settee.snapshot
restore = _settee.restore
clone = _settee.clone

__all__ = ["Snapshot", "snapshot", "restore", "clone"]
