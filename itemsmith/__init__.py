"""itemsmith: multi-agent authoring of verified time-series reasoning benchmarks.

The subpackages live in the repository's top-level folders (agents/, sandbox/, handlers/, ...)
and are installed under this one namespace; docs/architecture.md describes the layers.
"""

__version__ = "0.1.0"
