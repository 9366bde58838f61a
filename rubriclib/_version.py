"""The version of rubriclib: a leaf, so any module can name it without importing the package."""

__version__ = "0.1.0"
