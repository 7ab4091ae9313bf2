"""Environment of the report's sample project: attaches synthetic MCP transcripts."""

import json

TRANSCRIPT_MIME = "application/vnd.mcp-bdd.transcript+json"
STDERR_MIME = "application/vnd.mcp-bdd.stderr+json"


def before_feature(context, feature):
    if "broken_feature" in feature.tags:
        raise RuntimeError("the prompts fixture could not be created")


def before_scenario(context, scenario):
    context.exchanges = []
    context.seq = 0
    if "skip" in scenario.effective_tags:
        scenario.skip("not ready yet")
    if "hook_error" in scenario.effective_tags:
        raise RuntimeError("could not start the shop server")


def after_step(context, step):
    if context.exchanges:
        context.attach(TRANSCRIPT_MIME, json.dumps(context.exchanges).encode())
        context.exchanges = []
    if step.status.name == "failed":
        tail = {"server": "shop", "text": "INFO starting\nWARNING API_TOKEN=s3cr3t rejected\nERROR boom"}
        context.attach(STDERR_MIME, json.dumps(tail).encode())
