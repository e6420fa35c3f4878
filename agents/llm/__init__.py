"""The model layer: specs, providers, calls, usage and the model table."""
