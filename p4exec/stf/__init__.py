"""p4c's STF test format: parser (``parse``) and runner (``runner``)."""
