"""Built-in model plugins. Each registers through the ``zoo`` entry-point group, like any third-party plugin."""
