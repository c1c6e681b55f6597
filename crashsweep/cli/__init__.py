"""The command line: the only I/O of the model side, and the front of the real sweep.

main.py is the click group and the model-side commands; one module per larger command
(sweep.py, frontier.py, fuzz.py, view.py); options.py, outdir.py, artifacts.py, runs.py and
prog.py are what the commands share. This file imports nothing.
"""
