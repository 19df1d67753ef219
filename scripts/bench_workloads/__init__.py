"""Benchmark workloads for scripts/bench.py: plain functions, no side effects at import."""
