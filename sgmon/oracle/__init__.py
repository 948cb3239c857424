"""The database side under the Oracle collectors: the session, the queries, the errors and the
trace files.

python-oracledb is imported only when a session opens, so reading this package costs nothing on
a host without a database.  Nothing here imports a collector or a command.
"""
