"""`SofaTypes`: the helper types of SofaPython3 (those scene scripts use)."""
from Sofa.Types import BoundingBox, RGBAColor  # noqa: F401
