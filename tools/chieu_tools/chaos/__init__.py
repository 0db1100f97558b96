"""The chaos run (``chieu chaos``): the local cluster played hard by bots while a seeded schedule
of faults hits it, then every promise checked from the clients' records and the stores alone.

``schedule`` (the faults from the seed), ``proxy`` (a latency proxy in front of one NATS node),
``client`` (calls with retries and their recorded outcomes), ``records`` (what the clients sent and
saw), ``oracle`` (the logs followed, for the bots' legal choices), ``bots`` (players and
spectators), ``faults`` (the schedule applied to the cluster), ``checker`` (the checks), ``run``
(the whole run and its report).
"""
