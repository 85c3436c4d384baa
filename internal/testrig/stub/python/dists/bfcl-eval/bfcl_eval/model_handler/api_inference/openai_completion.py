class OpenAICompletionsHandler:
    """BFCL's OpenAI-compatible handler (reads OPENAI_BASE_URL)."""
