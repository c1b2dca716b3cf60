"""Errors that the CLI turns into one-line messages (no traceback)."""


class KcardError(Exception):
    """A problem the user can fix; the message says how."""


class ArtifactError(KcardError):
    """A model file is missing, unreadable or does not match its sha256."""


class UnknownNameError(KcardError):
    """A card, selector, backend or model name that nothing registered."""
