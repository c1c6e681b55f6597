"""The outside world: a small HTTP/JSON issue tracker on SQLite, its service and its client.

- service.py: the service process (`python -m crashsweep.realsweep.tracker.service`) and
  `ServiceProcess`, the parent's handle on it.
- routes.py: the route table (method, path, fields read, handler), one entry per route,
  which both request.py (reading) and server.py (running) read.
- server.py: the threading HTTP server and its handler; head.py reads a request's head,
  request.py its route, body and fields; store.py keeps issues, comments and idempotency keys
  in SQLite; spaces.py keeps one database per space.
- client.py and wire.py: the client a swept program uses, one real HTTP/1.1 exchange per call.

It imports nothing else of realsweep (checked by import-linter). This file imports nothing.
"""
