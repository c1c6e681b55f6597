"""The top-level --help's epilog: exit statuses, shell completion, and where to read more.

Every exit status crashsweep uses is listed here (crashsweep.cli.main.main is where each is
chosen), so a script can tell a violation from a mistake from a bug. Completion is click's:
the `_CRASHSWEEP_COMPLETE` variable makes crashsweep print a script for the shell, which
completes commands, options, and design names after --variant. Everything named here is
installed with crashsweep (the README is not, so it is not named).
"""

from __future__ import annotations

COMPLETE_VAR = "_CRASHSWEEP_COMPLETE"
"""The variable that asks crashsweep for a completion script (click's, named for the program)."""

EPILOG = f"""\b
Exit status:
  0    done: every invariant holds, nothing found
  1    a finding: an invariant violated or never exercised (replay: the
       path violates one; conform: a row disagrees; frontier: none is safe)
  2    bad usage or input: one line on stderr, nothing run
       (a command missing: this help)
  3    internal error, a bug: CRASHSWEEP_DEBUG=1 shows where
  130  interrupted (Ctrl-C): nothing half-written is left

\b
Shell completion (commands, options, design names), one line in your shell's start-up file:
  bash  eval "$({COMPLETE_VAR}=bash_source crashsweep)"        in ~/.bashrc
  zsh   eval "$({COMPLETE_VAR}=zsh_source crashsweep)"         in ~/.zshrc
  fish  {COMPLETE_VAR}=fish_source crashsweep | source         in ~/.config/fish/config.fish

\b
More: crashsweep COMMAND --help for a command's options; crashsweep variants for the designs.
The rules the model follows are installed with it, in crashsweep/spec/*.md:
  python -c "import crashsweep.spec as s; print(s.__path__[0])"
"""
