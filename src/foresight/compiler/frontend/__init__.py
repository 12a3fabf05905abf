"""libclang → loop-nest IR."""
