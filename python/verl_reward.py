"""verl custom reward hook for Context-Picker: scores each sampled picker
answer by Eq. 6 through a ctxsel server's POST /v1/reward.

Standard library only. In a verl config:

    custom_reward_function:
      path: python/verl_reward.py
      name: compute_score

and run `ctxsel serve` where the trainer can reach it. The rows that
`ctxsel export grpo --format verl` writes carry what the hook needs:
reward_model.ground_truth (the gold ids, JSON) and extra_info.offered
(the ids the prompt showed) and extra_info.stage (1 or 2).

Environment:
    CTXSEL_REWARD_URL      the endpoint (default http://127.0.0.1:8080/v1/reward)
    CTXSEL_REWARD_API_KEY  bearer key, when the server has CTXSEL_API_KEYS
    CTXSEL_REWARD_STAGE    stage when extra_info has none (default 1)
    CTXSEL_REWARD_TIMEOUT  seconds per call (default 30)
"""

import json
import os
import urllib.error
import urllib.request

DEFAULT_URL = "http://127.0.0.1:8080/v1/reward"


def _ids(value):
    """Reads a list of ids given as a list or as its JSON text."""
    if isinstance(value, str):
        value = json.loads(value)
    if hasattr(value, "tolist"):  # numpy arrays from parquet
        value = value.tolist()
    return [str(v) for v in value]


def reward(solution_str, offered, gold, stage, url=None, timeout=None):
    """Calls /v1/reward and returns its JSON object (reward, valid, why, ...)."""
    body = json.dumps({
        "output": solution_str,
        "offered": _ids(offered),
        "gold": _ids(gold),
        "stage": int(stage),
    }).encode("utf-8")
    req = urllib.request.Request(
        url or os.environ.get("CTXSEL_REWARD_URL", DEFAULT_URL),
        data=body,
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    key = os.environ.get("CTXSEL_REWARD_API_KEY")
    if key:
        req.add_header("Authorization", "Bearer " + key)
    t = float(timeout or os.environ.get("CTXSEL_REWARD_TIMEOUT", "30"))
    try:
        with urllib.request.urlopen(req, timeout=t) as resp:
            return json.loads(resp.read().decode("utf-8"))
    except urllib.error.HTTPError as e:
        detail = e.read().decode("utf-8", "replace")
        raise RuntimeError("ctxsel /v1/reward answered %d: %s" % (e.code, detail)) from None


def compute_score(data_source, solution_str, ground_truth, extra_info=None, **kwargs):
    """verl's custom reward hook: the Eq. 6 reward of one picker answer."""
    extra_info = extra_info or {}
    stage = extra_info.get("stage") or os.environ.get("CTXSEL_REWARD_STAGE", "1")
    return float(reward(solution_str, extra_info["offered"], ground_truth, stage)["reward"])
