"""The prefetching compiler's pipeline: front end → analysis → schedule → rewrite.

`transform` is the one entry point the driver calls per C translation unit.
"""
