"""What the `Sofa.PyTypes` wrappers share: turning a Data into the array they view."""
import numpy


def data_array(value):
    """The array behind `value`: a Data's value (a view for a DataContainer), else `value`."""
    import Sofa.Core
    if isinstance(value, Sofa.Core.Data):
        value = value.array() if isinstance(value, Sofa.Core.DataContainer) else value.value
    return numpy.asarray(value)
