"""Records which libattnvk.so the installed package loads (attnvk/_recorded.py),
and with ATTNVK_BUNDLE=1 copies it into the package. The library is looked
for, at install time, in: $ATTNVK_LIBRARY; $ATTNVK_BUILD_DIR; the install
prefix this folder was installed into by `cmake --install`
(install-location.txt); the build/ folder of the source checkout."""
import os
import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent
NAMES = ("libattnvk.so.0", "libattnvk.so")


def find_library():
    if os.environ.get("ATTNVK_LIBRARY"):
        return os.path.abspath(os.environ["ATTNVK_LIBRARY"])
    dirs = []
    if os.environ.get("ATTNVK_BUILD_DIR"):
        dirs.append(Path(os.environ["ATTNVK_BUILD_DIR"]))
    located = HERE / "install-location.txt"  # relative path to the installed library
    if located.exists():
        dirs.append((HERE / located.read_text().strip()).parent)
    dirs.append(HERE.parent / "build")
    for d in dirs:
        for name in NAMES:
            if (d / name).exists():
                return os.path.abspath(d / name)  # the SONAME link: a rebuilt library is picked up
    return None  # the package falls back to the system loader


class RecordLibrary(build_py):
    def run(self):
        super().run()
        target = Path(self.build_lib) / "attnvk"
        library = find_library()
        if library and os.environ.get("ATTNVK_BUNDLE") == "1":
            shutil.copy2(library, target / "libattnvk.so.0")
        (target / "_recorded.py").write_text(
            "# written by setup.py: the libattnvk.so found when this package was installed\n"
            f"LIBRARY = {library!r}\n")


setup(cmdclass={"build_py": RecordLibrary})
