"""`foresight config`: the flags a hand-written C program needs to use the runtime."""

from foresight import paths


def flags(cflags: bool, libs: bool) -> str:
    """Compiler and/or linker flags; the rpath makes binaries run without LD_LIBRARY_PATH."""
    out = []
    if cflags or not libs:
        out.append(f"-I{paths.include_dir()}")
    if libs or not cflags:
        lib = paths.lib_dir()
        # --no-as-needed: a program may reference the library only weakly, and
        # --as-needed would then drop it, silently turning every hint off.
        out += [f"-L{lib}", f"-Wl,-rpath,{lib}", "-Wl,--push-state,--no-as-needed",
                "-lforesight", "-Wl,--pop-state", "-pthread"]
    return " ".join(out)
