"""`Sofa.PyTypes.RGBAColor`: a colour as a numpy array, possibly a view on a Data."""
import numpy

from Sofa.PyTypes._wrap import data_array
from Sofa.Types import ColorChannels


class RGBAColor(ColorChannels, numpy.ndarray):
    """`RGBAColor()` (zeros), `RGBAColor([r, g, b, a])` (a copy), or `RGBAColor(data_or_array)`:
    a view on a 1-D array (an RGBAColor Data), so that writes reach the Data while its
    writeable block lasts."""

    def __new__(cls, value=None):
        if value is None:
            return numpy.zeros(4).view(cls)
        if isinstance(value, (list, tuple)):
            if len(value) != 4:
                raise ValueError("an RGBAColor is made of 4 values, not %d" % len(value))
            return numpy.array(value, dtype=float).view(cls)
        a = data_array(value)
        if a.ndim != 1:
            raise ValueError("Invalid dimension, expecting a 1D array, got %dD" % a.ndim)
        return a.view(cls)
