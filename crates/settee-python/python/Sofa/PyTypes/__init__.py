"""`Sofa.PyTypes`: numpy arrays that wrap a Data's value as a small vector type.

`Vec3(data)` and `RGBAColor(data)` are views on the Data's array (no copy), so that
`with obj.showColor.writeableArray(RGBAColor) as c: c[0] = 1.0` writes into the Data.
"""
from Sofa.PyTypes.Vec3 import Vec3, vadd, vsub, sadd, ssub, smul
from Sofa.PyTypes.RGBAColor import RGBAColor

__all__ = ["Vec3", "RGBAColor", "vadd", "vsub", "sadd", "ssub", "smul"]
