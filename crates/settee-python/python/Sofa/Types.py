"""`Sofa.Types`: small value types of SOFA's Data."""


class BoundingBox:
    """A box, min corner and max corner. A component's `bbox` Data is one of these (as
    SofaPython3 binds `Data<BoundingBox>`): it reads the engine's box (for a mechanical state, the
    bounds of its positions) and writes the Data. Without a Data, a free-standing box."""

    def __init__(self, bmin=(0.0, 0.0, 0.0), bmax=(0.0, 0.0, 0.0)):
        self._data = None
        self._box = [float(v) for v in bmin] + [float(v) for v in bmax]

    @classmethod
    def _of_data(cls, data):
        b = cls.__new__(cls)
        b._data = data
        return b

    def _values(self):
        if self._data is None:
            return list(self._box)
        import _settee
        return list(_settee.bounding_box(self._data))

    def _write(self, values):
        if self._data is None:
            self._box = values
        else:
            self._data.value = values

    def getMin(self):
        return self._values()[:3]

    def getMax(self):
        return self._values()[3:]

    def getCenter(self):
        b = self._values()
        return [(b[i] + b[i + 3]) * 0.5 for i in range(3)]

    def setMin(self, v):
        self._write([float(x) for x in v] + self._values()[3:])

    def setMax(self, v):
        self._write(self._values()[:3] + [float(x) for x in v])

    def __repr__(self):
        return "BoundingBox(min=%s, max=%s)" % (self.getMin(), self.getMax())


_NAMED_COLORS = {
    "white": (1.0, 1.0, 1.0, 1.0), "black": (0.0, 0.0, 0.0, 1.0), "red": (1.0, 0.0, 0.0, 1.0),
    "green": (0.0, 1.0, 0.0, 1.0), "blue": (0.0, 0.0, 1.0, 1.0), "cyan": (0.0, 1.0, 1.0, 1.0),
    "magenta": (1.0, 0.0, 1.0, 1.0), "yellow": (1.0, 1.0, 0.0, 1.0), "gray": (0.5, 0.5, 0.5, 1.0),
    "darkgray": (0.25, 0.25, 0.25, 1.0), "lightgray": (0.75, 0.75, 0.75, 1.0),
}


def _color_from_text(text):
    """SOFA's colour text: a name, `#rrggbb[aa]`, or 4 numbers."""
    t = text.strip()
    if t in _NAMED_COLORS:
        return _NAMED_COLORS[t]
    if t.startswith("#") and len(t) in (7, 9):
        v = [int(t[i:i + 2], 16) / 255.0 for i in range(1, len(t), 2)]
        return tuple(v + [1.0] * (4 - len(v)))
    parts = t.split()
    if len(parts) == 4:
        return tuple(float(p) for p in parts)
    raise ValueError("'%s' is not a colour (a name, #rrggbb[aa] or 4 numbers)" % text)


class ColorChannels:
    """The channel accessors both colour classes share (`Sofa.Types.RGBAColor`, a list, and
    `Sofa.PyTypes.RGBAColor`, a numpy view on a Data)."""

    def r(self):
        return self[0]

    def g(self):
        return self[1]

    def b(self):
        return self[2]

    def a(self):
        return self[3]


class RGBAColor(ColorChannels, list):
    """A colour: `RGBAColor()` (white), `RGBAColor([r, g, b, a])`, `RGBAColor(r, g, b, a)` or
    `RGBAColor("red")`."""

    def __init__(self, *args):
        if len(args) == 0:
            values = (1.0, 1.0, 1.0, 1.0)
        elif len(args) == 4:
            values = args
        elif len(args) == 1 and isinstance(args[0], str):
            values = _color_from_text(args[0])
        elif len(args) == 1:
            values = list(args[0])
        else:
            raise TypeError("RGBAColor takes no argument, 4 numbers, a list of 4 numbers or a colour name")
        if len(values) != 4:
            raise TypeError("an RGBAColor has 4 components, not %d" % len(values))
        if not all(isinstance(v, (int, float)) and not isinstance(v, bool) or hasattr(v, "dtype") for v in values):
            raise TypeError("the components of an RGBAColor are numbers")
        list.__init__(self, (float(v) for v in values))


    def lighten(self, factor):
        """Towards white by `factor` (SOFA's `RGBAColor::lighten`), opaque."""
        f = abs(factor)
        rgb = [min(max(c + (1.0 - min(max(c, 0.0), 1.0)) * f, 0.0), 1.0) for c in self[:3]]
        return RGBAColor(rgb + [1.0])
