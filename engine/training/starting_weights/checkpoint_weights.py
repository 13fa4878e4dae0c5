"""A checkpoint's tensors converted onto our encoder's weights.

One table (`weight_table`) maps every checkpoint tensor onto a weight of the classifier's
encoder, with how to reshape it; each tensor is used exactly once, shapes are checked, and
a missing, extra or mis-shaped tensor is a one-line error that names it. The tensors'
names are the checkpoint family's (`families`); finding and reading the checkpoint folder
is `checkpoints`'.

Shapes: D model size, N heads, H head size (D / N), E embedding size (D unless projected).
"""

from engine.training.starting_weights.checkpoints import Checkpoint, read_tensors
from engine.training.starting_weights.families import BERT
from runtime.errors import DataError


def weight_table(embedding, blocks, num_heads, family=BERT):
    """[(our variable, checkpoint tensor name, how to reshape)] for the whole encoder.

    Args:
        embedding: the `TokenAndPositionEmbedding` (with a LayerNorm, and the token types
            and projection the family has).
        blocks: the post-norm `TransformerEncoderBlock`s, in order.
        num_heads: N, to split the projections into heads.
        family: the checkpoint's `families.Family`, which names the tensors.
    """

    def heads_in(kernel):  # torch Linear (N * H, D) -> ours (D, N, H)
        return kernel.T.reshape(kernel.shape[1], num_heads, -1)

    def heads_out(kernel):  # torch Linear (D, N * H) -> ours (N, H, D)
        return kernel.T.reshape(num_heads, -1, kernel.shape[0])

    def transposed(kernel):  # torch Linear (out, in) -> Keras Dense (in, out)
        return kernel.T

    def split_bias(bias):
        return bias.reshape(num_heads, -1)

    def norm(layer, name):
        return [(layer.gamma, f"{name}.weight", None), (layer.beta, f"{name}.bias", None)]

    def dense(layer, name, kernel_reshape=transposed, bias_reshape=None):
        return [
            (layer.kernel, f"{name}.weight", kernel_reshape),
            (layer.bias, f"{name}.bias", bias_reshape),
        ]

    names = family.embedding
    table = [
        (embedding.token_embedding.embeddings, f"{names['word']}.weight", None),
        (embedding.position_encoding.position_embeddings, f"{names['position']}.weight", None),
        *norm(embedding.embedding_norm, names["norm"]),
    ]
    if names["token_type"]:
        table.insert(
            2, (embedding.token_type_embedding.embeddings, f"{names['token_type']}.weight", None)
        )
    # ELECTRA's projection exists only when its embeddings are narrower than its blocks.
    if names["projection"] and embedding.projection_dim:
        table += dense(embedding.embedding_projection, names["projection"])
    for index, block in enumerate(blocks):
        attention, feed_forward = block.self_attention, block.feed_forward

        def tensor(role, index=index):
            return family.block_tensor(index, role)

        for role in ("query", "key", "value"):
            table += dense(getattr(attention, f"{role}_dense"), tensor(role), heads_in, split_bias)
        table += [
            *dense(attention.output_dense, tensor("attention_output"), heads_out),
            *norm(block.attention_norm, tensor("attention_norm")),
            *dense(feed_forward.intermediate_dense, tensor("intermediate")),
            *dense(feed_forward.output_dense, tensor("output")),
            *norm(block.feed_forward_norm, tensor("output_norm")),
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
    embedding, blocks, family = encoder.embedding, encoder.blocks, checkpoint.family
    tensors = read_tensors(checkpoint.folder, family)
    if family.convert:  # RoBERTa: our ids' rows, positions from 0, no token types.
        tensors = family.convert(tensors, checkpoint.padding_id)
    table = weight_table(embedding, blocks, checkpoint.num_heads, family)
    missing = [name for _, name, _ in table if name not in tensors]
    if missing:
        raise DataError(
            f"model.pretrained: {checkpoint.folder}/model.safetensors has no tensor "
            f"{missing[0]} ({len(missing)} missing in all)"
        )
    used = {name for _, name, _ in table}
    skipped = {
        f"{family.block_prefix}{index}." for index in range(len(blocks), checkpoint.num_layers)
    }
    extra = [
        name
        for name in tensors
        if name not in used and not name.startswith(family.unused + tuple(skipped))
    ]
    if extra:
        raise DataError(
            f"model.pretrained: {checkpoint.folder}/model.safetensors has a tensor "
            f"{extra[0]} that no layer of a {family.title} encoder takes ({len(extra)} in all)"
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
