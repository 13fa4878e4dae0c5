"""What people look at: attention heatmap PNGs (`heatmaps`), the offline viewer (`viewer`,
its page in `viewer_page/`), BertViz JSON (`bertviz_export`), the TensorBoard images
callback (`attention_images_callback`) and the Markdown tables that reports save
(`markdown_table`)."""
