"""Finding libattnvk.so. Order: $ATTNVK_LIBRARY; a copy bundled next to the
package; the library recorded when the package was installed (a build tree
or an install prefix); the build tree beside a source checkout (PYTHONPATH=python);
the system loader. The error names every place tried."""
import ctypes
import os
from pathlib import Path

from ._errors import Unavailable

_HERE = Path(__file__).resolve().parent
_NAMES = ("libattnvk.so.0", "libattnvk.so")


def _recorded():
    try:
        from ._recorded import LIBRARY  # written by setup.py at install time
    except ImportError:  # not pip-installed: the copy `cmake --install` put beside its library?
        located = _HERE.parent / "install-location.txt"
        library = _HERE.parent / located.read_text().strip() if located.exists() else None
        return os.path.abspath(library) if library and library.exists() else None
    return LIBRARY


def _candidates():
    """(where, path-or-None) in search order; a None path is a place with nothing in it."""
    env = os.environ.get("ATTNVK_LIBRARY")
    if env:  # an explicit choice is the only one tried
        yield "ATTNVK_LIBRARY", env
        return
    yield "ATTNVK_LIBRARY", None
    bundled = [_HERE / n for n in _NAMES if (_HERE / n).exists()]
    yield f"bundled in {_HERE}", str(bundled[0]) if bundled else None
    yield "recorded at install", _recorded()
    beside = _HERE.parent.parent / "build" / "libattnvk.so"
    yield f"build tree {beside.parent}", str(beside) if beside.exists() else None
    yield "the system loader", "libattnvk.so.0"


def load():
    """(CDLL, path); raises attnvk.Unavailable naming what was tried."""
    tried = []
    for where, path in _candidates():
        if path is None:
            tried.append(f"{where}: none")
            continue
        try:
            return ctypes.CDLL(path), path
        except OSError as e:
            tried.append(f"{where}: {e}")
    raise Unavailable("cannot load libattnvk (" + "; ".join(tried) + ")")
