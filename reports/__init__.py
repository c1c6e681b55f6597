"""Pure renderers: an exploration's figures as text, Markdown and JSON (more formats beside).

Nothing here touches the disk or the terminal: every renderer returns a string, and the CLI
decides where it goes.
"""
