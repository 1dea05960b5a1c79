"""`Sofa.SofaDeformable`: SofaPython3's companion module of the spring force fields.

Scenes import it for `LinearSpring`, the description of one spring. The spring editing methods
SofaPython3 adds to `SpringForceField` (`addSpring`, `removeSpring`, …) are not part of Settee
yet (spec python.md, tier C).
"""


class LinearSpring:
    """One spring between two points of the states a spring force field links."""

    def __init__(self, index1, index2, springStiffness, dampingFactor, restLength, elongationOnly=False, enabled=True):
        self.index1 = index1
        self.index2 = index2
        self.springStiffness = springStiffness
        self.dampingFactor = dampingFactor
        self.restLength = restLength
        self.elongationOnly = elongationOnly
        self.enabled = enabled

    def __repr__(self):
        return "LinearSpring(%d, %d, %g, %g, %g)" % (self.index1, self.index2, self.springStiffness,
                                                     self.dampingFactor, self.restLength)
