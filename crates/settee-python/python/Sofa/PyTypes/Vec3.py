"""`Sofa.PyTypes.Vec3`: a 3-vector as a numpy array, possibly a view on a Data."""
import math

import numpy

from Sofa.PyTypes._wrap import data_array


class Vec3(numpy.ndarray):
    """`Vec3()` (zeros), `Vec3(x)` (x, x, x), `Vec3(x, y, z)`, `Vec3([x, y, z])`, or
    `Vec3(data_or_array)`: a view on a 1-D array of 3 values (a Vec3d Data). Anything else raises
    `AttributeError`, as SofaPython3's does."""

    def __new__(cls, *args):
        if len(args) == 0:
            return numpy.zeros(3).view(cls)
        if len(args) == 3:
            return numpy.array(args).view(cls)
        if len(args) != 1:
            raise AttributeError("Vec3 takes no argument, one, or three, not %d" % len(args))
        arg = args[0]
        if isinstance(arg, (list, tuple)):
            if len(arg) != 3:
                raise AttributeError("Invalid list size. Expecting a 3D list, got a %dD one." % len(arg))
            return numpy.array(arg).view(cls)
        if isinstance(arg, (int, float)):
            return numpy.full(3, float(arg)).view(cls)
        a = data_array(arg)
        if a.ndim != 1:
            raise AttributeError("Invalid dimension, expecting a 1D array, got %dD" % a.ndim)
        if a.shape[0] != 3:
            raise AttributeError("Invalid dimension, expecting a 3D array, got a %dD one." % a.shape[0])
        return a.view(cls)

    def __eq__(self, other):
        """A single truth value (all components equal), not an element-wise array."""
        return bool(numpy.all(numpy.asarray(self) == numpy.asarray(other)))

    def __ne__(self, other):
        return not self == other

    __hash__ = None

    def getNorm(self):
        return math.sqrt(Vec3.dot(self, self))

    def toString(self):
        return " ".join(str(self.item(i)) for i in range(3))

    def normalize(self, *args):
        self /= self.getNorm()

    def _by(self, args, op):
        if len(args) == 3:
            other = args
        elif len(args) == 1 and hasattr(args[0], "__len__") and len(args[0]) == 3:
            other = args[0]
        elif len(args) == 1:
            other = (args[0],) * 3
        else:
            raise TypeError("expected one value, a 3-vector or three values")
        for i in range(3):
            self[i] = op(self[i], other[i])

    def translate(self, *args):
        """Adds a scalar, a 3-vector or three values, in place."""
        self._by(args, lambda a, b: a + b)

    def scale(self, *args):
        """Multiplies by a scalar, a 3-vector or three values, component-wise, in place."""
        self._by(args, lambda a, b: a * b)

    @staticmethod
    def dot(v1, v2):
        return sum(v1[i] * v2[i] for i in range(3))

    @staticmethod
    def cross(v1, v2):
        return Vec3(v1[1] * v2[2] - v1[2] * v2[1], v1[2] * v2[0] - v1[0] * v2[2], v1[0] * v2[1] - v1[1] * v2[0])


def vadd(a, b):
    return [a[i] + b[i] for i in range(3)]


def vsub(a, b):
    return [a[i] - b[i] for i in range(3)]


def sadd(a, b):
    return [a[i] + b for i in range(3)]


def ssub(a, b):
    return [a[i] - b for i in range(3)]


def smul(a, b):
    return [a[i] * b for i in range(3)]
