"""The `itemsmith` command line (`itemsmith.cli.app:app`), one module per command group. The CLI
is a top layer: it calls the service's use cases and the bank; `itemsmith serve` starts the API."""
