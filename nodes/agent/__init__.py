"""Agent steps: plan, rewrite, search, select entities, gather evidence, evaluate, synthesize."""
