"""PostgreSQL + pgvector store: models, engine, embedded server and repository functions."""
