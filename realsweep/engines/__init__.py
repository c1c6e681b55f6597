"""Where a sweep's processes run, behind `values.Engine` and `values.Workers`.

- local.py: threads of this process (the default engine).
- ray.py and host.py: Ray tasks across a cluster, on actors that keep a tracker service and a
  zygote warm per worker (`pip install crashsweep[ray]`).

The sweep's bookkeeping stays with the caller either way, so results do not depend on the
engine. This file imports nothing.
"""
