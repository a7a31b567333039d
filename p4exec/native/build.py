"""Compile generated C with the system C compiler through cffi, cached by the digest of the C source in the
user's cache directory (0700, as p4exec's other caches)."""
from __future__ import annotations

import hashlib
import importlib.util
import os
import shutil
import sys
import tempfile
import threading
from pathlib import Path
from types import ModuleType

from p4exec.privdir import ensure_private_dir, user_cache_dir

_loaded: dict[str, ModuleType] = {}
_lock = threading.Lock()
BUILD_VERSION = "1"


class BuildError(Exception):
    """No C compiler, or the compiler rejected the generated C (the Python pipeline runs instead)."""


def compiler_available() -> str | None:
    """The C compiler's path, or None ($CC when set, as cffi's build uses it; else cc or gcc on PATH)."""
    cc = os.environ.get("CC", "").strip()
    if cc:
        return shutil.which(cc.split()[0])
    return shutil.which("cc") or shutil.which("gcc")


def _cache_dir() -> Path:
    d = user_cache_dir("p4exec")
    if d is None:
        return ensure_private_dir(Path(tempfile.gettempdir()) / f"p4exec-native-{os.geteuid()}")
    return ensure_private_dir(d / "native")


def build(source: str, cdef: str) -> ModuleType:
    """The compiled cffi module of `source` (built once per digest; later loads come from the cache)."""
    digest = hashlib.sha256((BUILD_VERSION + "\0" + cdef + "\0" + source).encode()).hexdigest()[:32]
    name = f"_p4n_{digest}"
    with _lock:
        mod = _loaded.get(name)
        if mod is not None:
            return mod
        cache = _cache_dir()
        so = next(iter(sorted(cache.glob(f"{name}.*.so"))), None) or (cache / f"{name}.so" if (cache / f"{name}.so").exists() else None)
        if so is None:
            if compiler_available() is None:
                raise BuildError(f"no C compiler found ({os.environ.get('CC') or 'cc/gcc on PATH'})")
            try:
                import cffi
            except ImportError as e:          # pragma: no cover - cffi is a dependency
                raise BuildError(f"cffi is not installed ({e})") from None
            ffi = cffi.FFI()
            try:
                ffi.cdef(cdef)
            except Exception as e:  # noqa: BLE001 - declarations cffi cannot read become a reason, not a crash
                raise BuildError(f"cffi cannot read the declarations: {str(e).splitlines()[0] if str(e) else type(e).__name__}") from None
            ffi.set_source(name, source, extra_compile_args=["-O2", "-w"])
            tmp = tempfile.mkdtemp(prefix="build-", dir=cache)
            try:
                built = ffi.compile(tmpdir=tmp, verbose=False)
            except Exception as e:  # noqa: BLE001 - a compiler failure becomes a reason, not a crash
                shutil.rmtree(tmp, ignore_errors=True)
                raise BuildError(f"the C compiler failed: {str(e).splitlines()[0] if str(e) else type(e).__name__}") from None
            so = cache / Path(built).name
            os.replace(built, so)
            shutil.rmtree(tmp, ignore_errors=True)
        spec = importlib.util.spec_from_file_location(name, so)
        if spec is None or spec.loader is None:
            raise BuildError(f"cannot load {so}")
        try:
            mod = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(mod)
        except ImportError as e:  # a cached build whose cffi runtime is missing here: a reason, not a traceback
            raise BuildError(f"cannot load the native build ({e})") from None
        sys.modules.setdefault(name, mod)
        _loaded[name] = mod
        return mod
