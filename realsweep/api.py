"""The real side's facade: what the CLI may import of realsweep (filled in as the CLI moves to it)."""
