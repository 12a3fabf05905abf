"""`foresight config`: the flags a hand-written C program needs to use the runtime."""

from foresight import paths


def flags(cflags: bool, libs: bool) -> str:
    """Compiler and/or linker flags; the rpath makes binaries run without LD_LIBRARY_PATH."""
    out = []
    if cflags or not libs:
        out.append(f"-I{paths.include_dir()}")
    if libs or not cflags:
        lib = paths.lib_dir()
        out += [f"-L{lib}", f"-Wl,-rpath,{lib}", "-lforesight", "-pthread"]
    return " ".join(out)
