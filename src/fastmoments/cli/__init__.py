"""The ``fastmoments`` command line. Each sub-command lives in a module ``cmd_<name>.py``
with a ``register(subparsers)`` function that adds its parser and sets ``func``."""
