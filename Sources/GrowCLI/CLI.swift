import GrowDaemon
