"""SOFA's Qt interface: a stub (Settee runs headless)."""
