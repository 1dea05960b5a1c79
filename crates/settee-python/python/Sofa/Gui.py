"""`Sofa.Gui`: Settee runs headless; the GUI calls scripts make in `main()` do nothing."""


class GUIManager:
    @staticmethod
    def Init(program_name, gui_name=""):
        return 0

    @staticmethod
    def createGUI(node, filename=""):
        return 0

    @staticmethod
    def SetDimension(width, height):
        pass

    @staticmethod
    def MainLoop(node, filename=""):
        return 0

    @staticmethod
    def closeGUI():
        pass

    @staticmethod
    def ListSupportedGUI(sep=" "):
        return ""

    @staticmethod
    def GetSupportedGUI():
        return []

    @staticmethod
    def SetSceneFile(filename):
        pass
