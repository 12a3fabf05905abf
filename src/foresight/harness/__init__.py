"""The measurement harness: memory caps, cold caches, readahead, swap, and reports."""
