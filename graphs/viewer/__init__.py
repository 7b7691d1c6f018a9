"""The offline run viewer: a run's checkpoints and ledger rows rendered as one HTML page."""
