"""attnvk.Error and its subclasses: one per attnvk_status, carrying the
library's one-line message (attnvk_last_error) as str(error)."""


class Error(Exception):
    """An attnvk failure; .status is attnvk_status_name's text ("invalid argument", ...)."""

    status = "error"

    def __init__(self, message, status=None):
        super().__init__(message)
        self.message = message
        if status is not None:
            self.status = status


class InvalidArgument(Error, ValueError):
    status = "invalid argument"


class Unsupported(Error):
    status = "unsupported"


class Unavailable(Error):
    status = "unavailable"


class OutOfMemory(Error, MemoryError):
    status = "out of memory"


class DeviceLost(Error):
    status = "device lost"


class CompileError(Error):
    status = "compile error"


class IoError(Error, OSError):
    status = "i/o error"


class BackendError(Error):
    status = "backend error"


# indexed by the attnvk_status value (attnvk.h)
BY_STATUS = [None, InvalidArgument, Unsupported, Unavailable, OutOfMemory, DeviceLost, CompileError, IoError,
             BackendError]


def bad_argument(message):
    """The error for arguments Python catches before the library sees them."""
    return InvalidArgument(message)

for _cls in (Error, *BY_STATUS[1:]):
    _cls.__module__ = "attnvk"  # tracebacks say attnvk.InvalidArgument, as users import it
