"""Paper 4's multiprocessor cache simulator (compiler-directed page coloring): a physically
indexed L2 per CPU, the operating system's page mapping (pc, bh, random, cdpc), MESI
coherence, misses split into cold, capacity, conflict, true and false sharing.

The simulator is C (cachesim/, installed as libexec/foresight/foresight-cachesim by
`make setup`); `replay` runs it on a trace.
"""
