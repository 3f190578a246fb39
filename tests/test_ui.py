"""The Dagster UI as a person uses it: runs from `curation run` in the job's history, a failed gate named
with its reason, the release partition of that batch shown as blocked, the other batch's checks green,
"Re-execute all" and a fresh launch of a CLI batch's partition from the UI reading the same data.

Real components only: `curation run` subprocesses on a copy of the e2e project (its token scores are
cached, so no model scoring happens again), the real `dagster dev` on a free local port, and the system
Chromium driven headless by Playwright. No browser, no pass: a missing Chromium fails this test.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
import yaml

from tests.helpers import free_port

pytestmark = [pytest.mark.ui, pytest.mark.slow]

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
SHOTS = Path(os.environ.get("CURATION_UI_SHOTS", "/tmp/ui-shots"))
REPO = "__repository__@curation"
RUN_TIMEOUT_S = 1500




def _graphql(port: int, query: str, variables: dict | None = None) -> dict:
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/graphql",
        data=json.dumps({"query": query, "variables": variables or {}}).encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        body = json.loads(response.read())
    assert "errors" not in body, body["errors"]
    return body["data"]


def _browser():
    """Playwright's sync API, or a clear failure naming what to install (never a skip)."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.fail("playwright is not installed: `pip install -r requirements.txt` (make test does this)")
    if not CHROMIUM.exists():
        pytest.fail(f"no Chromium at {CHROMIUM}: `apt-get install -y chromium` (.ci/run installs it)")
    return sync_playwright


def _curation_run(env: dict, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(BIN / "curation"), "run", *args, "--log-level", "WARNING"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT_S,
    )


@pytest.fixture(scope="module")
def deliveries(e2e, tmp_path_factory):
    """Two batches run by the CLI into one persistent instance: `tiny` (passes every gate, released) and
    `strict` (its own input and a config whose masked-fraction limit it cannot meet: blocked)."""
    _, config = e2e
    root = tmp_path_factory.mktemp("ui") / "project"
    shutil.copytree(config.base_dir, root, ignore=shutil.ignore_patterns("releases"))
    settings = yaml.safe_load((root / "curation.yaml").read_text(encoding="utf-8"))
    strict = {**settings, "batch_id": "strict", "input": None}
    strict["gates"] = {**settings.get("gates", {}), "masked_fraction_min": 0.0001, "masked_fraction_max": 0.001}
    (root / "strict.yaml").write_text(yaml.safe_dump({k: v for k, v in strict.items() if v is not None}))
    records = [json.loads(line) for line in (root / "corpus.jsonl").read_text(encoding="utf-8").splitlines()]
    (root / "second.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records[: len(records) // 2]))
    home = root / "dagster_home"
    home.mkdir()
    (home / "dagster.yaml").write_text("telemetry:\n  enabled: false\n", encoding="utf-8")
    env = {
        **os.environ,
        "DAGSTER_HOME": str(home),
        "CURATION_CONFIG": str(root / "curation.yaml"),  # what the UI's code location starts from
        "HF_HUB_OFFLINE": "1",
        "TLDEXTRACT_PUBLIC_SUFFIX_LIST_URLS": "",
    }
    passed = _curation_run(env, "--config", str(root / "curation.yaml"), "--force")
    assert passed.returncode == 0, passed.stdout[-3000:] + passed.stderr[-3000:]
    blocked = _curation_run(
        env, "--config", str(root / "strict.yaml"), "--input", str(root / "second.jsonl"), "--batch-id", "strict"
    )
    assert blocked.returncode == 1, blocked.stdout[-3000:] + blocked.stderr[-3000:]
    assert "check masked_fraction_budget" in blocked.stdout and "FAILED" in blocked.stdout
    # the drift check only warns: it never prints as a failure, whatever it found
    assert not re.search(r"check score_drift +FAILED", passed.stdout + blocked.stdout), blocked.stdout[-3000:]
    return root, env


@pytest.fixture(scope="module")
def ui(deliveries):
    """`dagster dev` (webserver + daemon) on a free port, serving the workspace the CLI launched into."""
    root, env = deliveries
    port = free_port()
    log = open(root / "dagster-dev.log", "w")
    proc = subprocess.Popen(
        [str(BIN / "dagster"), "dev", "-w", str(ROOT / "workspace.yaml"), "-h", "127.0.0.1", "-p", str(port)],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        deadline = time.time() + 240
        while True:
            assert proc.poll() is None, (root / "dagster-dev.log").read_text()[-3000:]
            try:
                data = _graphql(port, "{ repositoriesOrError { ... on RepositoryConnection { nodes { name } } } }")
                if data["repositoriesOrError"].get("nodes"):
                    break
            except OSError:
                pass
            assert time.time() < deadline, "dagster dev never served the code location"
            time.sleep(2)
        yield port, root
    finally:
        os.killpg(proc.pid, signal.SIGTERM)  # its own session: the webserver, the daemon, their code servers
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:  # a loaded machine can take minutes to stop them all
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)
        log.close()


RUNS = """{ runsOrError(filter: {pipelineName: "curation_job"}) { ... on Runs { results {
  runId status tags { key value } parentRunId } } } }"""


def _runs(port: int) -> list[dict]:
    results = _graphql(port, RUNS)["runsOrError"]["results"]
    for run in results:
        run["partition"] = {t["key"]: t["value"] for t in run["tags"]}.get("dagster/partition")
    return results


def _wait_for(port: int, run_id: str) -> str:
    deadline = time.time() + RUN_TIMEOUT_S
    while time.time() < deadline:
        status = _graphql(port, f'{{ runOrError(runId: "{run_id}") {{ ... on Run {{ status }} }} }}')
        status = status["runOrError"]["status"]
        if status in ("SUCCESS", "FAILURE", "CANCELED"):
            return status
        time.sleep(5)
    raise AssertionError(f"run {run_id} did not finish in {RUN_TIMEOUT_S}s")


CHECK_EXECUTIONS = """query ($asset: [String!]!, $check: String!) {
  assetCheckExecutions(assetKey: {path: $asset}, checkName: $check, limit: 20) {
    runId partition status evaluation { description } } }"""


def _check_executions(port: int, asset: str, check: str) -> list[dict]:
    return _graphql(port, CHECK_EXECUTIONS, {"asset": [asset], "check": check})["assetCheckExecutions"]


def _dismiss_newsletter(page) -> None:
    """The UI's first-visit "Join the Dagster community" dialog covers the page: skip it (nothing is sent)."""
    from playwright.sync_api import TimeoutError as NotShown

    try:
        page.get_by_role("button", name="Skip").first.click(timeout=8000)
    except NotShown:  # the dialog shows once per browser profile; absent is fine
        pass


def _text(page, url: str, expect: str, shot: str, timeout_ms: int = 60_000) -> str:
    """Open `url`, wait until `expect` is visible, save a screenshot, return the page's text."""
    page.goto(url)
    _dismiss_newsletter(page)
    page.get_by_text(expect).first.wait_for(timeout=timeout_ms)
    page.wait_for_timeout(1500)  # let the remaining panels render before the screenshot
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{shot}.png"), full_page=True)
    return page.inner_text("body")


def test_cli_runs_failed_gate_blocked_release_and_relaunch_in_the_browser(ui):
    port, _ = ui
    base = f"http://127.0.0.1:{port}"
    runs = _runs(port)
    by_partition = {run["partition"]: run for run in runs}
    assert {"tiny", "strict"} <= set(by_partition), runs
    passed_run, blocked_run = by_partition["tiny"], by_partition["strict"]
    assert passed_run["status"] == "SUCCESS" and blocked_run["status"] == "FAILURE"

    # check results belong to their batch: strict's masked-fraction gate failed, tiny's stayed green
    executions = _check_executions(port, "mask_spans", "masked_fraction_budget")
    latest = {}
    for execution in executions:  # newest first
        latest.setdefault(execution["partition"], execution)
    assert latest["tiny"]["status"] == "SUCCEEDED" and latest["strict"]["status"] == "FAILED", executions
    reason = latest["strict"]["evaluation"]["description"]
    assert "above the maximum 0.001" in reason

    with _browser()() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1600, "height": 1000})

        # 1. the job's run history lists both CLI runs
        history = _text(page, f"{base}/locations/{REPO}/jobs/curation_job/runs", passed_run["runId"][:8], "01-runs")
        assert blocked_run["runId"][:8] in history

        # 2. the failed-gate run names the gate and says why
        gate_log = f"{base}/runs/{blocked_run['runId']}?logs=step%3Amask_spans_masked_fraction_budget"
        failed = _text(page, gate_log, "gate masked_fraction_budget FAILED", "02-failed-run")
        assert "gate masked_fraction_budget FAILED" in failed and "above the maximum" in failed

        # 3. the release partition of that batch is shown as blocked, by that gate
        release = _text(
            page, f"{base}/assets/release?view=events&partition=strict", "release blocked by", "03-release-blocked"
        )
        assert "release blocked by masked_fraction_budget" in release and "above the maximum" in release

        # 4. the lineage of the delivery group loads with its checks
        lineage = _text(page, f"{base}/assets/mask_spans?view=lineage", "redacted_view", "04-lineage")
        assert "detector_spans" in lineage and "training_view" in lineage

        # 5. "Re-execute all" on the CLI run launches a run that succeeds
        page.goto(f"{base}/runs/{passed_run['runId']}")
        _dismiss_newsletter(page)
        page.get_by_role("button", name="Re-execute all").first.click(timeout=60_000)
        page.wait_for_timeout(3000)
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SHOTS / "05-reexecuted.png"), full_page=True)
        browser.close()

    children = [run for run in _runs(port) if run["parentRunId"] == passed_run["runId"]]
    assert len(children) == 1, "Re-execute all launched no run"
    assert _wait_for(port, children[0]["runId"]) == "SUCCESS"

    # 6. a fresh launch of the strict partition from the UI (its launch API, no run config) reads the
    # batch's registered input and config: the same gate fails for the same reason
    launched = _graphql(
        port,
        """mutation ($params: ExecutionParams!) { launchRun(executionParams: $params) {
          __typename ... on LaunchRunSuccess { run { runId } } ... on PythonError { message } } }""",
        {
            "params": {
                "selector": {
                    "repositoryLocationName": "curation",
                    "repositoryName": "__repository__",
                    "jobName": "curation_job",
                },
                "executionMetadata": {"tags": [{"key": "dagster/partition", "value": "strict"}]},
            }
        },
    )["launchRun"]
    assert launched["__typename"] == "LaunchRunSuccess", launched
    assert _wait_for(port, launched["run"]["runId"]) == "FAILURE"
    relaunched = [
        e
        for e in _check_executions(port, "mask_spans", "masked_fraction_budget")
        if e["runId"] == launched["run"]["runId"]
    ]
    assert relaunched and relaunched[0]["status"] == "FAILED"
    assert relaunched[0]["evaluation"]["description"] == reason
