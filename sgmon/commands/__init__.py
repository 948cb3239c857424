"""Subcommands of the sgmon CLI, one module each, imported only when chosen."""
