"""Training a run: the recipes of how the encoder trains (`recipes`), where its starting
weights come from (`starting_weights/`), the compiled trainer with its optimizer
(`trainer`, `sparse_adamw`) and the callbacks it trains with (`callbacks`), the
`tf.distribute` strategy (`distribution`), the
training dynamics recorded per example (`dynamics`), the masked language model of
pretrain.py (`masked_language_model`) and fitting in a run folder (`fitting`).
"""
