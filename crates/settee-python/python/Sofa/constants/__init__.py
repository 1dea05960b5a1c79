"""`Sofa.constants`: key codes of keyboard events."""
from Sofa.constants import Key  # noqa: F401
