"""The GRASP agent: its graph, sub-agent subgraph, state types and reducers, run configuration."""
