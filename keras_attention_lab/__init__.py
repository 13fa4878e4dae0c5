"""keras-attention-lab: transformer attention for Keras 3 you can trust and look inside."""

__version__ = "0.1.0"
