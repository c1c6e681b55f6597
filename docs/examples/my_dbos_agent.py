"""A support agent of one's own as a DBOS workflow, its own tools played by crashsweep from a job file.

The workflow asks the model for each turn in a step (its reply, with its call IDs, recorded
before any call goes out) and runs each call the model asked for in a step of its own, by
the tool's name: lookup_order (a read), refund and send_email (effects on the world: the
tracker service stands for the payments and mail APIs). support.toml maps the job's calls to
these tools and their arguments. The lines marked `# crashsweep` are all the glue. Sweep it
from this folder:

    crashsweep sweep --target my_dbos_agent:run --check my_dbos_agent:check --depth 1
"""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Any

from dbos import DBOS, DBOSConfig

from crashsweep.realsweep.adapters.dbos import check as job_check  # crashsweep
from crashsweep.realsweep.adapters.dbos import crash_points, install_crash_points, launch_or_recover  # crashsweep
from crashsweep.realsweep.adapters.script import ScriptedModel, tracker  # crashsweep: tracker stands for the APIs
from crashsweep.spec.job import load_job  # crashsweep

JOB = load_job(Path(__file__).with_name("support.toml"))  # crashsweep: which tool, with what arguments
model = ScriptedModel(JOB)  # crashsweep: in production, your model client


@DBOS.step()
@crash_points  # crashsweep: a crash point before the step's result is recorded
def ask_model(turns_done: int) -> list[dict[str, Any]]:
    """The model's reply: the calls of its next turn (none: its final answer)."""
    return [asdict(call) for call in model.reply(turns_done) or []]


@DBOS.step()
@crash_points  # crashsweep
def lookup_order(call_id: str, order_id: str) -> str:
    """Look an order up."""
    return f"order {order_id}: 1 item, 20 EUR, delivered"


@DBOS.step()
@crash_points  # crashsweep
def refund(call_id: str, order_id: str, amount: int) -> str:
    """Refund part of an order (no idempotency key: a retry pays twice)."""
    number = tracker().create_issue(f"refund {amount} on {order_id}", run="support", call=call_id)
    return f"refund #{number} sent"


@DBOS.step()
@crash_points  # crashsweep
def send_email(call_id: str, to: str, body: str) -> str:
    """Send a customer an email."""
    number = tracker().create_issue(f"email to {to}", run="support", call=call_id, body=body)
    return f"email #{number} sent"


TOOLS = {"lookup_order": lookup_order, "refund": refund, "send_email": send_email}


@DBOS.workflow()
def support() -> int:
    """Ask, run the turn's calls, ask again, until the model answers; the tool turns run."""
    turns_done = 0
    while calls := ask_model(turns_done):
        for call in calls:
            TOOLS[call["name"]](call["id"], **call["args"])
        turns_done += 1
    return turns_done


def run() -> None:
    """Run workflow support-1 to its end: start it, or recover it after a crash."""
    config: DBOSConfig = {"name": "support", "system_database_url": "sqlite:///dbos.sqlite", "log_level": "WARNING"}
    config["notification_listener_polling_interval_sec"] = 0.02  # crashsweep: exit without a 1 s poll's wait
    install_crash_points()  # crashsweep: crash points around DBOS's records
    DBOS(config=config)
    try:
        launch_or_recover(support, "support-1")  # crashsweep: start it, or wait for its recovery
    finally:
        DBOS.destroy()


check = job_check(JOB)  # crashsweep: the records, mapped back to the job's calls by the model's ledger
