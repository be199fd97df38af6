"""The built-in training methods, one module each: its config class, its trainer builder and one
:func:`safebeal.align.config.register_method` call (``METHODS`` loads these modules on first lookup)."""
