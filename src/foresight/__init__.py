"""Foresight: compiler-directed memory and I/O management for out-of-core programs."""

__version__ = "0.1.0"
