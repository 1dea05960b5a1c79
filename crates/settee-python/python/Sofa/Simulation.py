"""`Sofa.Simulation`: initialise, step and load scenes."""
import _settee

init = _settee.init
initRoot = _settee.initRoot
animate = _settee.animate
animateNSteps = _settee.animateNSteps
load = _settee.load
unload = _settee.unload
reset = _settee.reset
print = _settee.print


def initVisual(node):
    """Headless: there is nothing to draw."""


def initTextures(node):
    """Headless: there is nothing to draw."""


def updateVisual(node):
    """Headless: there is nothing to draw."""
