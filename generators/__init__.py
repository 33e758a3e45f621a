"""Task and dialogue generators: the offline task families, the history writers and banks, the Plus
rewriter, and the llm roles' prompts and parsing."""
