"""Graph nodes: one module per behaviour, each a function of typed state to a partial update."""
