"""`foresight cc`: a drop-in C compiler driver around the prefetching transformation."""
