"""Adapters that sweep agents built on real frameworks, on top of the generic sweep engine.

Each adapter is optional (`pip install crashsweep[langgraph]`, `crashsweep[dbos]`,
`crashsweep[openai-agents]`, `crashsweep[pydantic-ai]`, `crashsweep[temporal]`) and uses
only the public crash point API (crashsweep.realsweep.probe.crashpoint), the tracker client and the engine's
values for a check; the engine never imports an adapter.

- script.py: the pieces both share: a scripted model that plays a job file, the tracker tools'
  bodies and their keys, and the default check that maps the tracker's records back to the
  job's calls.
- langgraph.py: a checkpoint saver wrapper with crash points, tracker tools, a scripted chat
  model and a resume helper; langgraph_agent.py is the built-in example agent.
- dbos.py: crash points on DBOS's step and workflow records, tracker steps, launch/recover;
  dbos_agent.py is the built-in example workflow.
- openai_agents.py: a session wrapper with crash points around its writes, tracker
  function_tools, a scripted Model, a resume helper (session or RunState on disk, a scripted
  approval); openai_agents_agent.py is the built-in example agent.
- pydantic_ai.py: a scripted FunctionModel, tracker toolsets (plain tools or DBOS steps) on
  pydantic-ai's DBOS durability; pydantic_ai_agent.py is the built-in example agent.
- temporal.py: one dev server per sweep (started in the zygote), an activity interceptor with
  crash points before an activity's body and before its outcome is reported, tracker
  activities, start-or-attach; temporal_agent.py is the built-in example workflow.
- frameworks.py: the registry, one `Framework` record per adapter (its extra, package, modules,
  docs page, determinism and work-folder facts, durability modes); it imports no framework.
- builtin.py: the sweep target and check of a built-in example agent (`sweep --framework`).
"""
