"""Reading labelled text: where the user's files are (`shards`), the one parser of them
(`record_batches`), the files read into memory (`labelled_files`), the built-in and TFDS
datasets and the `dataset` section loaded into splits (`loading`), whether a source is read
into memory or streamed (`read_plan`), and the unlabelled texts files of prediction
(`texts_file`)."""
