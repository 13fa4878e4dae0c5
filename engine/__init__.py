"""The machinery around a run, below the commands and above the model (as detectron2's
`engine`): the reports people read (`reports`), the commands' shared arguments and
start-up (`cli`), training a run (`training/`) and evaluating a saved run into its folder
(`evaluation/`). The run folder itself (its files, a finished run loaded) is `run_folder/`'s,
below this and `inspection/`.
"""
