"""Task and dialogue generators: offline task families and template banks (llm prompts later)."""
