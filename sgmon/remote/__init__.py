"""What sgmon sends to a remote host instead of installing anything there.

``pump.py`` is the program that runs on the far side with the host's own ``python3`` (3.6 or
later, standard library only): it reads the raw /proc files and the Data Guard sockets' netlink
replies each tick and ships them as they are.  ``mirror.py`` is the consumer's side: it writes what
arrives into a local directory laid out like the host's ``/``, which the collectors read through
their ``root`` option, so every figure is parsed by the same code as on the local host.
"""
