"""Stand-in for HuggingFace transformers (not packaged by Debian 12)."""
