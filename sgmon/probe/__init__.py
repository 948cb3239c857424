"""`sgmon probe`: an oratcptest-like test of a Data Guard link (seed 002).

The client sends fixed-size messages the way a log writer ships redo and times the
acknowledgement the chosen transport mode waits for; the server receives them and, in the SYNC
modes, writes and syncs them to a file before acknowledging, reporting its write time back so the
client can split the latency into network and disk.
"""
