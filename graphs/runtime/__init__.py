"""Runtime: settings from the environment, services, the one wiring every graph uses, checkpoints."""
