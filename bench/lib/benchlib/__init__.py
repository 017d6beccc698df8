"""The redlockrun benchmark: servers, peers, the seven figures and the report (see bench/README.md)."""
