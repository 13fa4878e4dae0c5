"""Splits: the three splits' texts and labels (`text_splits.TextSplits`) and the seeded ways
to carve missing held-out splits out of train: stratified by label (`stratified`) or by a
keyed hash of each text (`hashed`)."""
