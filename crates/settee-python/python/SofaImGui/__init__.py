"""SOFA's ImGui interface: a stub (Settee runs headless)."""
