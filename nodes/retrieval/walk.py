"""A graph's random-walk matrix: the one piece the entity graph and PPR both need."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp


@dataclass(frozen=True, eq=False)
class Transition:
    """A graph's column-stochastic walk matrix and its dangling nodes, reusable across queries."""

    matrix: sp.csr_array  # matrix[j, i] = w(i→j) / out_weight(i); dangling columns are all zero
    dangling: npt.NDArray[np.bool_]


def transition_matrix(adjacency: sp.csr_array | sp.csr_matrix) -> Transition:
    """Normalise ``adjacency`` (row = source, as networkx exports it) into a walk matrix."""
    weights = sp.csr_array(adjacency, dtype=np.float64)
    out_weight = np.asarray(weights.sum(axis=1)).ravel()
    dangling = out_weight == 0
    inverse = np.divide(1.0, out_weight, out=np.zeros_like(out_weight), where=~dangling)
    # (D⁻¹ A)ᵀ: the mass at i spreads over its out-edges in proportion to their weights. Rows
    # are scaled in place of a diagonal product, which costs more than the walk on small graphs.
    scaled = weights.copy()
    scaled.data *= np.repeat(inverse, np.diff(scaled.indptr))
    matrix = sp.csr_array(scaled.T)
    return Transition(matrix=matrix, dangling=dangling)
