"""Benchmark suites: variants compared in one run, as tables, JSON and plots."""
