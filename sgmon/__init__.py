"""sgmon: live monitor for Oracle Data Guard SYNC redo transport.

Kept to a literal version so that headless commands (status, record) import nothing heavy.
"""

__version__ = "0.1.0"
