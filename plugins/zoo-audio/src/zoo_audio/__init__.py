"""zoo-audio: audio models for zoo (keyword spotting, speech recognition, anomaly detection).

Importing this package is cheap: torch and numpy load only when a model is built.
"""

__version__ = "0.1.0"
