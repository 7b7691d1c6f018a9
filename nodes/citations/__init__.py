"""Citations: an answer's sources picked from what it was read from, and checked, token-free."""
