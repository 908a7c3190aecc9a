"""zoo-sensors: sensor and time-series models for zoo (activity recognition, novelty detection,
speaker and appliance identification), trained here on data read from wheels by sha256.

Importing this package is cheap: torch and numpy load only when a model is built.
"""

__version__ = "0.1.0"
