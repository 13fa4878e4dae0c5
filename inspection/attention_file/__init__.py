"""The attention export's files (docs/attention_format.md): the format's version and names
(`format`, below the rest), one example (`record`), the reader (`reader`), the writer
(`writer`) and older versions read as the current one (`upgrade`)."""
