# SPDX-License-Identifier: Apache-2.0
"""ingero-bench's zero-code entry point for the user's own Python jobs.

`ingero-bench trace -- python3 train.py` puts this directory first on the job's PYTHONPATH, so
Python's site module imports this file at start-up in every interpreter of the job. It

1. installs the DataLoader observer (ingero_observer.py, beside it) when INGERO_OBSERVER_DIR is set
   and INGERO_OBSERVER is not "0"; otherwise it imports nothing and only chains;
2. then imports the next `sitecustomize` on sys.path (Debian's /usr/lib/python3.x/sitecustomize.py,
   or the user's own), as if this one were not there: with this directory out of sys.path and this
   module out of sys.modules during that import, both restored afterwards.

Installing first means a user sitecustomize that imports torch is already observed, and one that
raises cannot keep the observer out. Its exception is not caught here: it reaches site.py, which
reports "Error in sitecustomize" and continues, exactly as without this file. Attributes this module
lacks are looked up on the chained module, so `import sitecustomize; sitecustomize.x` still finds
the user's x. Python started with -S, -I or -E never reads this file.
"""
import os as _os
import sys as _sys

_HERE = _os.path.dirname(_os.path.abspath(__file__))
ingero_chained = None  # the sitecustomize module this one chained to, or None
# The file name the observer's code carries, in place of its path: the harness removes these files
# after the run, and a frame of the observer in the job's traceback (its next() wraps the
# DataLoader's) would point into a file that is gone. This name says whose frame it is.
OBSERVER_CODE_NAME = "<ingero-bench DataLoader observer>"


def _install():
    out_dir = _os.environ.get("INGERO_OBSERVER_DIR")
    if not out_dir or _os.environ.get("INGERO_OBSERVER") == "0":
        return
    try:
        _import_observer().install(out_dir, _os.environ.get("INGERO_OBSERVER_OVERRIDES"))
    except Exception as e:  # noqa: BLE001 -- the job runs unobserved, and the file says why
        _report_install_error(out_dir, e)


def _renamed(code, name):
    """code and every code object in it, carrying the file name `name`."""
    consts = tuple(_renamed(c, name) if isinstance(c, type(code)) else c for c in code.co_consts)
    return code.replace(co_filename=name, co_consts=consts)


def _import_observer():
    """ingero_observer.py (beside this file) as `import ingero_observer` would load it (its cached
    bytecode included), but with its code named OBSERVER_CODE_NAME."""
    path = _os.path.join(_HERE, "ingero_observer.py")
    loader = _sys.modules["_frozen_importlib_external"].SourceFileLoader("ingero_observer", path)
    code = _renamed(loader.get_code("ingero_observer"), OBSERVER_CODE_NAME)
    module = type(_sys)("ingero_observer")
    module.__file__ = path
    module.__loader__ = loader
    _sys.modules["ingero_observer"] = module
    try:
        exec(code, module.__dict__)
    except BaseException:
        del _sys.modules["ingero_observer"]
        raise
    return module


def _report_install_error(out_dir, error):
    try:
        import json
        line = json.dumps({"type": "summary", "pid": _os.getpid(), "batches": 0, "dropped": 0,
                           "errors": 1, "error_sample": "install: %s: %s" % (type(error).__name__, error),
                           "override_error": None})
        # Only into the folder the harness made (as ingero_observer._open_private_folder): never created,
        # not a link, this user's, mode 0700.
        folder = _os.open(out_dir, _os.O_RDONLY | _os.O_DIRECTORY | _os.O_NOFOLLOW | _os.O_CLOEXEC)
        try:
            st = _os.fstat(folder)
            if st.st_uid != _os.geteuid() or st.st_mode & 0o7777 != 0o700:
                return
            fd = _os.open("observer-%d.jsonl" % _os.getpid(),
                          _os.O_WRONLY | _os.O_CREAT | _os.O_APPEND | _os.O_NOFOLLOW | _os.O_CLOEXEC, 0o644,
                          dir_fd=folder)
            try:
                _os.write(fd, (line + "\n").encode())
            finally:
                _os.close(fd)
        finally:
            _os.close(folder)
    except Exception:  # noqa: BLE001 -- nowhere left to report it
        pass


def _dir_id(path):
    """A directory's identity under any spelling or link (one stat), or None."""
    try:
        st = _os.stat(path or _os.curdir)
    except (TypeError, ValueError, OSError):
        return None
    return st.st_dev, st.st_ino


def _chain():
    global ingero_chained
    ours = _sys.modules.get("sitecustomize")
    here = _dir_id(_HERE)
    removed = [(i, entry) for i, entry in enumerate(_sys.path)
               if entry == _HERE or (here is not None and _dir_id(entry) == here)]
    for i, _ in reversed(removed):
        del _sys.path[i]
    _sys.modules.pop("sitecustomize", None)
    try:
        try:
            __import__("sitecustomize")
        except ImportError as e:
            if e.name != "sitecustomize":
                raise
            # no other sitecustomize on the path: nothing to chain to
        else:
            ingero_chained = _sys.modules.get("sitecustomize")
    finally:
        for i, entry in removed:
            _sys.path.insert(i, entry)
        if ours is not None:
            _sys.modules["sitecustomize"] = ours


def __getattr__(name):
    if ingero_chained is not None and not name.startswith("__"):
        return getattr(ingero_chained, name)
    raise AttributeError("module 'sitecustomize' has no attribute %r" % name)


_install()
_chain()
