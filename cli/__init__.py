"""The `itemsmith` command line."""
