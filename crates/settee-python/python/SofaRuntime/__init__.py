"""`SofaRuntime`: plugins and data repositories. Every component Settee has is registered from
the start; the plugins of SOFA's own modules (and SofaPython3's companions) load as no-ops."""
import sys as _sys

import Sofa
import Sofa.Helper

DataRepository = Sofa.Helper.System.DataRepository
PluginRepository = Sofa.Helper.System.PluginRepository

_KNOWN_PREFIXES = ("Sofa.Component", "Sofa.GL", "Sofa.GUI", "Sofa.Core", "Sofa.Simulation", "Sofa.Helper")
_KNOWN = {"SofaPython3", "STLIB", "Sofa.Component", "SofaComponentAll", "SofaOpenglVisual", "SofaBaseMechanics",
          "SofaImplicitOdeSolver", "SofaLoader", "SofaSimpleFem", "SofaBoundaryCondition", "SofaDeformable",
          "SofaMiscForceField", "SofaGeneralLoader", "SofaBaseLinearSolver", "SofaEngine", "SofaConstraint",
          "SofaMeshCollision", "SofaBaseCollision", "SofaGeneralEngine", "SofaTopologyMapping", "SofaRigid",
          "SofaBaseTopology", "SofaBaseVisual", "SofaMiscMapping", "SofaSparseSolver", "SofaExplicitOdeSolver",
          "SofaUserInteraction", "SofaGraphComponent", "SofaGeneralSimpleFem", "SofaSimpleFem", "ArticulatedSystemPlugin"}
loadedPlugins = []


def _known(name):
    return name in _KNOWN or name.startswith(_KNOWN_PREFIXES)


def importPlugin(name):
    """True when the plugin is one whose components Settee has (they are always registered)."""
    if _known(name):
        if name not in loadedPlugins:
            loadedPlugins.append(name)
        return True
    Sofa.Helper.msg_error("SofaRuntime", "plugin '%s' is not part of Settee" % name)
    return False


def unload_plugin(name):
    if name in loadedPlugins:
        loadedPlugins.remove(name)


def init():
    pass


def unloadModules():
    Sofa.unloadModules()


def getCategories(className):
    """SOFA's categories of a component class (`["Loader"]` for MeshOBJLoader)."""
    import _settee
    return _settee.class_categories(className)
