"""`sgmon lab`: a SYNC Data Guard pair between two network namespaces, with switchable faults."""
