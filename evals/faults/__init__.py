"""The faults suite behind `grasp bench faults`.

Real `grasp` processes are killed, starved of their database, or fed provider faults, and the
store is checked against an uninterrupted run.
"""
