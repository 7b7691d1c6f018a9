"""The arithmetic of one MiniLM pass over some texts: the bench's work in float operations.

Texts per CPU-second differ 2-3x between VMs of one name; float operations per CPU-second say
whether a core ran its vector units near their rate (an AVX2 core's two 256-bit FMA pipes give
at most 32 a cycle) or something else held it back. Padding is not counted: it is the encoder's
overhead, not the texts' work, so a variant that pads less shows more useful work per second.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from graphs.models.minilm_batches import minilm_tokenizer
from graphs.models.onnx_export import weights_dir


@dataclass(frozen=True)
class EncoderShape:
    """A BERT-style encoder's sizes, as its config.json names them."""

    layers: int
    hidden: int
    feed_forward: int


def minilm_shape() -> EncoderShape:
    """The shipped MiniLM's sizes (6 layers, 384 wide, 1,536 in the feed-forward)."""
    config = json.loads((weights_dir() / "config.json").read_text())
    return EncoderShape(
        config["num_hidden_layers"], config["hidden_size"], config["intermediate_size"]
    )


def token_counts(texts: list[str]) -> list[int]:
    """Each text's tokens as the encoder sees them (with [CLS] and [SEP], truncated)."""
    tokenizer = minilm_tokenizer(weights_dir() / "tokenizer.json")
    return [len(encoding.ids) for encoding in tokenizer.encode_batch(texts)]


def pass_flops(counts: list[int], shape: EncoderShape) -> int:
    """Float operations of one unpadded pass (a multiply-add counts two).

    Per layer and token: the Q, K, V and output projections (4 hidden²) and the two feed-forward
    products (2 hidden × feed-forward); per layer and text of n tokens: the attention's scores
    and weighted sum (n² × hidden each). Norms, GELU and softmax are left out (a few %); an int8
    variant does the same work in integers.
    """
    per_token = 2 * (4 * shape.hidden**2 + 2 * shape.hidden * shape.feed_forward)
    return shape.layers * sum(per_token * n + 2 * 2 * n * n * shape.hidden for n in counts)
