"""Generators of C test programs for the differential tests of `foresight cc`."""
