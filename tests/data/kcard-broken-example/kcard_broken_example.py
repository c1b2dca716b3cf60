"""A kcard plugin that cannot be imported: kcard must report it and keep working."""

import kcard_dependency_that_is_not_installed  # noqa: F401
