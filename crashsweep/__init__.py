"""crashsweep's composition root: the command line that wires spec, variants, explorer and reports.

This package is the only code that reads or writes files, prints, or exits.
"""

__version__ = "0.1.0"
