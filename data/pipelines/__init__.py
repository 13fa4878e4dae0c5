"""The tf.data pipelines of token ids and labels, batches padded to their longest text and
bucketed by length: of splits held in memory (`in_memory`) and of streamed splits
(`streamed`), and the frozen lower blocks' states computed once (`lower_states`)."""
