"""`Sofa.Types`: small value types of SOFA's Data."""


class BoundingBox:
    def __init__(self, bmin=(0.0, 0.0, 0.0), bmax=(0.0, 0.0, 0.0)):
        self._min, self._max = list(bmin), list(bmax)

    def getMin(self):
        return list(self._min)

    def getMax(self):
        return list(self._max)

    def setMin(self, v):
        self._min = list(v)

    def setMax(self, v):
        self._max = list(v)


class RGBAColor(list):
    def __init__(self, values=(1.0, 1.0, 1.0, 1.0)):
        super().__init__(values)

    def r(self):
        return self[0]

    def g(self):
        return self[1]

    def b(self):
        return self[2]

    def a(self):
        return self[3]
