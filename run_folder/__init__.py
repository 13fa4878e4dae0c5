"""The run folder: its file names and writes that are never half done (`runs`), and a
finished run loaded from it (`saved_run`).

Below `engine/`, which trains runs and evaluates them into their folders, and below
`inspection/`, whose `show` loads a run given by its path: both read a run folder here,
and nothing here imports either.
"""
