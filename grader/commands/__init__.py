"""One module per `softlookup` command (each with a ``main``), and what only a command needs."""
