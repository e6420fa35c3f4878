"""Built-in handlers for real datasets that ship inside installed packages (the `examples` extra).

Each module imports its data package only when a handler first loads, so importing this package is cheap;
`handlers.registry` names the classes.
"""
