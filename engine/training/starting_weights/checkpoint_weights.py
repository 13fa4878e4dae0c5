"""A BERT-family checkpoint's tensors converted onto our encoder's weights.

One table (`weight_table`) maps every checkpoint tensor onto a weight of the classifier's
encoder, with how to reshape it; each tensor is used exactly once, shapes are checked, and
a missing, extra or mis-shaped tensor is a one-line error that names it. Finding and
reading the checkpoint folder is `checkpoints`'.

Shapes: D model size, N heads, H head size (D / N).
"""

from engine.training.starting_weights.checkpoints import Checkpoint, read_tensors
from runtime.errors import DataError

# Tensors a checkpoint may carry that an encoder does not use: the pretraining heads and
# the position-id buffer. Anything else unknown is an error.
UNUSED_PREFIXES = ("pooler.", "cls.", "embeddings.position_ids")


def weight_table(embedding, blocks, num_heads):
    """[(our variable, checkpoint tensor name, how to reshape)] for the whole encoder.

    Args:
        embedding: the `TokenAndPositionEmbedding` (with token types and a LayerNorm).
        blocks: the post-norm `TransformerEncoderBlock`s, in order.
        num_heads: N, to split the projections into heads.
    """

    def heads_in(kernel):  # torch Linear (N * H, D) -> ours (D, N, H)
        return kernel.T.reshape(kernel.shape[1], num_heads, -1)

    def heads_out(kernel):  # torch Linear (D, N * H) -> ours (N, H, D)
        return kernel.T.reshape(num_heads, -1, kernel.shape[0])

    def norm(layer, prefix):
        return [
            (layer.gamma, f"{prefix}.LayerNorm.weight", None),
            (layer.beta, f"{prefix}.LayerNorm.bias", None),
        ]

    def transposed(kernel):
        return kernel.T

    def split_bias(bias):
        return bias.reshape(num_heads, -1)

    table = [
        (embedding.token_embedding.embeddings, "embeddings.word_embeddings.weight", None),
        (
            embedding.position_encoding.position_embeddings,
            "embeddings.position_embeddings.weight",
            None,
        ),
        (
            embedding.token_type_embedding.embeddings,
            "embeddings.token_type_embeddings.weight",
            None,
        ),
        *norm(embedding.embedding_norm, "embeddings"),
    ]
    for index, block in enumerate(blocks):
        prefix, attention = f"encoder.layer.{index}", block.self_attention
        for ours, theirs in (("query", "query"), ("key", "key"), ("value", "value")):
            table += [
                (
                    getattr(attention, f"{ours}_dense").kernel,
                    f"{prefix}.attention.self.{theirs}.weight",
                    heads_in,
                ),
                (
                    getattr(attention, f"{ours}_dense").bias,
                    f"{prefix}.attention.self.{theirs}.bias",
                    split_bias,
                ),
            ]
        feed_forward = block.feed_forward
        table += [
            (attention.output_dense.kernel, f"{prefix}.attention.output.dense.weight", heads_out),
            (attention.output_dense.bias, f"{prefix}.attention.output.dense.bias", None),
            *norm(block.attention_norm, f"{prefix}.attention.output"),
            (
                feed_forward.intermediate_dense.kernel,
                f"{prefix}.intermediate.dense.weight",
                transposed,
            ),
            (feed_forward.intermediate_dense.bias, f"{prefix}.intermediate.dense.bias", None),
            (feed_forward.output_dense.kernel, f"{prefix}.output.dense.weight", transposed),
            (feed_forward.output_dense.bias, f"{prefix}.output.dense.bias", None),
            *norm(block.feed_forward_norm, f"{prefix}.output"),
        ]
    return table


def load_checkpoint_weights(encoder, checkpoint: Checkpoint) -> int:
    """Assigns the checkpoint's tensors to a built `TextEncoder`; returns how many of the
    checkpoint's blocks it skipped.

    The first blocks of the checkpoint, as many as the model has, are loaded
    (`model.pretrained_layers`); the tensors of later blocks and of the pretraining heads
    are known and left unused.

    Raises:
        DataError: a tensor is missing, unexpected or of another shape than its weight.
    """
    embedding, blocks = encoder.embedding, encoder.blocks
    tensors = read_tensors(checkpoint.folder)
    table = weight_table(embedding, blocks, checkpoint.num_heads)
    missing = [name for _, name, _ in table if name not in tensors]
    if missing:
        raise DataError(
            f"model.pretrained: {checkpoint.folder}/model.safetensors has no tensor "
            f"{missing[0]} ({len(missing)} missing in all)"
        )
    used = {name for _, name, _ in table}
    skipped = {f"encoder.layer.{index}." for index in range(len(blocks), checkpoint.num_layers)}
    extra = [
        name
        for name in tensors
        if name not in used and not name.startswith(UNUSED_PREFIXES + tuple(skipped))
    ]
    if extra:
        raise DataError(
            f"model.pretrained: {checkpoint.folder}/model.safetensors has a tensor "
            f"{extra[0]} that no layer of a BERT encoder takes ({len(extra)} in all)"
        )
    for variable, name, reshape in table:
        try:
            value = tensors[name] if reshape is None else reshape(tensors[name])
        except ValueError:  # Cannot be split into the heads: reported as a shape below.
            value = tensors[name]
        if tuple(value.shape) != tuple(variable.shape):
            raise DataError(
                f"model.pretrained: {name} has shape {tuple(tensors[name].shape)}, "
                f"{variable.path} needs {tuple(variable.shape)}"
            )
        variable.assign(value.astype(variable.dtype))
    return len(skipped)
