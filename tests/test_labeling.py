"""The labeling loop's files: Label Studio tasks and config out, validated labeled JSONL back in."""

from __future__ import annotations

import json
import re
import stat
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

from curation.cli import main
from curation.core.spans import Span, merge
from curation.labels.loop import (
    Candidate,
    LabelImportError,
    config_path_for,
    disagreement,
    import_export,
    pick_random,
    pick_spread,
    read_candidates,
    tagger_uncertainty,
    without_labeled,
    write_tasks,
)
from curation.labels.sets import load_labeled
from curation.views.convention import KNOWN_LABELS
from tests.helpers import free_port

TEXT = "Call Dana Whitfield at dana@example.com today."


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _annotation(results, ann_id=1, cancelled=False, updated="2026-01-01T00:00:00Z"):
    return {"id": ann_id, "was_cancelled": cancelled, "updated_at": updated, "result": results}


def _result(start, end, label, text=None):
    value = {"start": start, "end": end, "labels": [label]}
    if text is not False:
        value["text"] = TEXT[start:end] if text is None else text
    return {"from_name": "label", "to_name": "text", "type": "labels", "value": value}


def _task(task_id, annotations, doc_id="d1", text=TEXT):
    return {"id": task_id, "data": {"text": text, "doc_id": doc_id}, "annotations": annotations}


def _write(tmp_path: Path, tasks) -> Path:
    path = tmp_path / "export.json"
    path.write_text(json.dumps(tasks))
    return path


def test_export_format_and_label_config(tmp_path):
    candidate = Candidate("doc-7", TEXT, "text", [Span(5, 19, "PERSON"), Span(23, 39, "EMAIL_ADDRESS")], 0.71234)
    out = tmp_path / "tasks.json"
    config = write_tasks(out, [candidate], "curation test")
    assert config == tmp_path / "tasks.label_config.xml" == config_path_for(out)
    tasks = json.loads(out.read_text())
    assert tasks == [
        {
            "data": {"text": TEXT, "doc_id": "doc-7"},
            "predictions": [
                {
                    "model_version": "curation test",
                    "score": 0.7123,
                    "result": [
                        {
                            "from_name": "label",
                            "to_name": "text",
                            "type": "labels",
                            "value": {"start": 5, "end": 19, "text": "Dana Whitfield", "labels": ["PERSON"]},
                        },
                        {
                            "from_name": "label",
                            "to_name": "text",
                            "type": "labels",
                            "value": {"start": 23, "end": 39, "text": "dana@example.com", "labels": ["EMAIL_ADDRESS"]},
                        },
                    ],
                }
            ],
        }
    ]
    root = ET.fromstring(config.read_text())
    labels = root.find("Labels")
    assert root.tag == "View" and labels.get("name") == "label" and labels.get("toName") == "text"
    assert [e.get("value") for e in labels.findall("Label")] == list(KNOWN_LABELS)
    text = root.find("Text")
    assert text.get("name") == "text" and text.get("value") == "$text"
    assert _mode(out) == _mode(config) == 0o600


def test_random_strategy_is_seeded():
    candidates = [Candidate(f"d{i}", f"text {i}") for i in range(50)]
    first = [c.doc_id for c in pick_random(candidates, 10, seed=3)]
    assert first == [c.doc_id for c in pick_random(candidates, 10, seed=3)]
    assert first != [c.doc_id for c in pick_random(candidates, 10, seed=4)]
    assert len(set(first)) == 10 and len(pick_random(candidates, 99, seed=0)) == 50


def test_uncertainty_picks_spread_over_kinds_and_lengths():
    # the most uncertain records are all short texts; the spread still takes code and long records
    short = [Candidate(f"s{i}", "x" * 50, "text", score=1.0 - i / 100) for i in range(20)]
    code = [Candidate(f"c{i}", "y" * 50, "code", score=0.5 - i / 100) for i in range(5)]
    long = [Candidate(f"l{i}", "z" * 3000, "text", score=0.2 - i / 100) for i in range(5)]
    picked = pick_spread(short + code + long, 6)
    assert [c.doc_id for c in picked] == ["s0", "c0", "l0", "s1", "c1", "l1"]
    # the targets strategy: one pick per stratum first, then each stratum's share (20 short take the next 3)
    from curation.labels.loop import pick_proportional

    shared = pick_proportional(short + code + long, 6)
    assert [c.doc_id for c in shared] == ["s0", "c0", "l0", "s1", "s2", "s3"]
    assert [c.doc_id for c in pick_proportional(short + code + long, 12)][6:] == ["s4", "c1", "l1", "s5", "s6", "s7"]
    assert pick_proportional(short + code + long, 4) == shared[:4]  # priority order: the first k are n = k's
    assert [c.doc_id for c in pick_spread(short, 3)] == ["s0", "s1", "s2"]
    assert len(pick_spread(short + code, 100)) == 25


def test_expected_targets_rises_with_the_target_mass_below_the_threshold_too():
    from curation.labels.loop import expected_targets

    nothing = np.array([[1.0, 0.0]] * 8, dtype=np.float32)
    one_weak = np.array([[1.0, 0.0]] * 7 + [[0.7, 0.3]], dtype=np.float32)  # a likely miss at a 0.5 threshold
    names = np.array([[0.1, 0.9]] * 4 + [[1.0, 0.0]] * 4, dtype=np.float32)
    assert expected_targets(nothing) == 0.0 == expected_targets(None)
    assert 0.0 < expected_targets(one_weak) < expected_targets(names) < 1.0


def test_uncertainty_scores():
    threshold = 0.4
    at_threshold = np.array([[0.6, 0.4]] * 8, dtype=np.float32)
    sure = np.array([[1.0, 0.0]] * 8, dtype=np.float32)
    assert tagger_uncertainty(at_threshold, threshold) == pytest.approx(1.0)
    assert tagger_uncertainty(sure, threshold) < tagger_uncertainty(at_threshold, threshold)
    assert tagger_uncertainty(None, threshold) == 0.0
    agree = [[Span(0, 4, "PERSON")], [Span(0, 4, "PERSON")]]
    assert disagreement(10, agree) == 0.0
    assert disagreement(10, [[Span(0, 4, "PERSON")], []]) == 1.0
    assert disagreement(10, [[Span(0, 4, "PERSON")], [Span(2, 4, "PERSON")]]) == 0.5
    assert disagreement(10, [[], []]) == 0.0


def test_import_latest_annotation_not_cancelled(tmp_path):
    tasks = [
        _task(
            11,
            [
                _annotation([_result(5, 19, "PERSON")], ann_id=1, updated="2026-01-01T00:00:00Z"),
                _annotation([_result(5, 19, "PERSON"), _result(23, 39, "EMAIL_ADDRESS")], 2, updated="2026-01-02"),
                _annotation([], ann_id=3, cancelled=True, updated="2026-01-03"),
            ],
        ),
        _task(12, [], doc_id="d2"),  # not labeled yet: skipped, not a record without targets
    ]
    records, unlabeled = import_export(_write(tmp_path, tasks), "support")
    assert unlabeled == 1
    assert records == [
        {
            "id": "d1",
            "text": TEXT,
            "spans": [{"start": 5, "end": 19, "label": "PERSON"}, {"start": 23, "end": 39, "label": "EMAIL_ADDRESS"}],
            "domain": "support",
        }
    ]


def test_import_maps_labels_and_resolves_overlaps(tmp_path):
    results = [_result(5, 9, "PER"), _result(5, 19, "PERSON"), _result(23, 39, "EMAIL_ADDRESS")]
    (record,), _ = import_export(_write(tmp_path, [_task(1, [_annotation(results)])]), "d")
    spans = [(s["start"], s["end"], s["label"]) for s in record["spans"]]
    assert spans == [(5, 19, "PERSON"), (23, 39, "EMAIL_ADDRESS")]


def test_import_reads_utf16_offsets_of_the_browser(tmp_path):
    text = "\U0001f600 Dana"
    result = {"type": "labels", "value": {"start": 3, "end": 7, "text": "Dana", "labels": ["PERSON"]}}
    (record,), _ = import_export(_write(tmp_path, [_task(1, [_annotation([result])], text=text)]), "d")
    assert record["spans"] == [{"start": 2, "end": 6, "label": "PERSON"}]


def test_import_names_every_bad_task(tmp_path):
    tasks = [
        _task(1, [_annotation([_result(5, 19, "PERSON")])]),
        _task(2, [_annotation([_result(5, 90, "PERSON", text="x")])], doc_id="d2"),
        _task(3, [_annotation([_result(5, 19, "PERSON", text="Dana")])], doc_id="d3"),
        _task(4, [_annotation([_result(5, 19, "WIZARD")])], doc_id="d4"),
        _task(5, [_annotation([_result(5, 19, "PERSON")])], doc_id="d1"),
        {"id": 6, "data": {"doc_id": "d6"}, "annotations": []},
    ]
    with pytest.raises(LabelImportError) as err:
        import_export(_write(tmp_path, tasks), "d")
    message = str(err.value)
    assert "5 problem(s); nothing written" in message
    assert "task 2: annotation 1 result 0: [5, 90) is empty or outside the text" in message
    assert "task 3: annotation 1 result 0: [5, 19) is 'Dana Whitfield' in the text, but the annotation says" in message
    assert "task 4: annotation 1 result 0: unknown label 'WIZARD'; known labels:" in message
    assert "task 5: duplicate doc_id 'd1' (also task 1)" in message
    assert "task 6: 'data.text' must be a string" in message
    assert "task 1:" not in message


def test_import_cli_writes_nothing_on_a_bad_task_and_a_private_file_otherwise(tmp_path, capsys):
    out = tmp_path / "support.jsonl"
    bad = _write(tmp_path, [_task(1, [_annotation([_result(5, 19, "WIZARD")])])])
    assert main(["label", "import", str(bad), "--out", str(out)]) == 2
    assert "task 1" in capsys.readouterr().err and not out.exists()
    good = _write(tmp_path, [_task(1, [_annotation([_result(5, 19, "PERSON")])])])
    assert main(["label", "import", str(good), "--out", str(out)]) == 0
    assert _mode(out) == 0o600
    (record,) = load_labeled(out)  # a labeled file like every other: calibration reads it as it is
    assert record.id == "d1" and [(s.start, s.end, s.label) for s in record.spans] == [(5, 19, "PERSON")]
    assert json.loads(out.read_text())["domain"] == "support"


def test_candidates_ignore_labels_of_the_input(tmp_path):
    path = tmp_path / "in.jsonl"
    rows = [
        {"id": "a", "text": "hello Dana", "spans": [{"start": 6, "end": 10, "label": "NOT_A_LABEL"}]},
        {"id": "b", "text": "print(1)", "kind": "code"},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert [(c.doc_id, c.kind, c.spans) for c in read_candidates(path)] == [("a", "text", []), ("b", "code", [])]


# -- the round trip through a real Label Studio ---------------------------------------------------
LABEL_STUDIO = "label-studio==1.23.2"


def _label_studio_venv() -> Path:
    """Label Studio in its own venv under the cache (its pins never touch the project's), made once."""
    import subprocess
    import sys

    from curation.score.scorer import cache_root

    venv = cache_root() / "label-studio-venv"
    python = venv / "bin" / "python"
    version = "import importlib.metadata as m; print(m.version('label-studio'))"
    wanted = LABEL_STUDIO.split("==")[1]
    if python.exists():
        found = subprocess.run([python, "-c", version], capture_output=True, text=True)
        if found.stdout.strip() == wanted:
            return venv
    subprocess.run([sys.executable, "-m", "venv", "--clear", venv], check=True)
    subprocess.run([python, "-m", "pip", "install", "-q", LABEL_STUDIO], check=True)
    return venv




class _LabelStudioAPI:
    """The few REST calls the round trip needs, with the user's legacy token."""

    def __init__(self, url: str, token: str) -> None:
        self.url, self.token = url, token

    def call(self, method: str, path: str, body=None, timeout: float = 60.0):
        import urllib.request

        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.url + path, data=data, method=method)
        request.add_header("Authorization", f"Token {self.token}")
        request.add_header("Content-Type", "application/json")
        with urllib.request.urlopen(request, timeout=timeout) as response:
            raw = response.read()
        return json.loads(raw) if raw else None


def _wait_until_up(url: str, process, log: Path, timeout_s: float = 240.0) -> None:
    import time
    import urllib.error
    import urllib.request

    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"label-studio exited with {process.returncode}:\n{log.read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(url + "/health", timeout=5) as response:
                if response.status == 200:
                    return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            pass
        time.sleep(1.0)
    raise AssertionError(f"label-studio not up after {timeout_s:.0f}s:\n{log.read_text()[-3000:]}")


def _triples(results) -> list[tuple[int, int, str]]:
    return [(r["value"]["start"], r["value"]["end"], r["value"]["labels"][0]) for r in results]


@pytest.mark.slow
@pytest.mark.heavy  # installs Label Studio (minutes on a fresh machine): `make test-heavy`, which CI runs
def test_round_trip_through_label_studio(tmp_path):
    """Export 12 sample records (uncertainty, the real model and tagger), label them in a real Label Studio
    through its REST API (predictions accepted, one span changed, one task skipped), export, import."""
    import os
    import secrets
    import signal
    import subprocess
    import time

    started = time.perf_counter()
    venv = _label_studio_venv()
    sample = Path(__file__).resolve().parent.parent / "curation" / "data" / "sample_corpus.jsonl"
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(sample.read_text(encoding="utf-8").splitlines(keepends=True)[:12]), encoding="utf-8")
    tasks_path = tmp_path / "tasks.json"
    # a small calibration set of its own (40 bundled validation records, no public sets) keeps the tagger's
    # training to seconds on a fresh machine; the warehouse cache is the test's own
    validation = sample.parent / "validation.jsonl"
    calibration = tmp_path / "support.jsonl"
    calibration.write_text("".join(validation.read_text(encoding="utf-8").splitlines(keepends=True)[:40]))
    export = ["label", "export", str(corpus), "--n", "6", "--out", str(tasks_path), "--calibrate-on", str(calibration)]
    export += ["--no-public-sets", "--warehouse", str(tmp_path / "cache" / "eval.duckdb")]
    assert main(export) == 0
    exported = json.loads(tasks_path.read_text())
    assert len(exported) == 6 and _mode(tasks_path) == 0o600
    assert any(t["predictions"][0]["result"] for t in exported), "the sample has PII: some predictions expected"
    exported_s = time.perf_counter() - started

    port, token, data_dir = free_port(), secrets.token_hex(20), tmp_path / "ls-data"
    env = {
        **os.environ,
        "LABEL_STUDIO_USERNAME": "curation@example.com",
        "LABEL_STUDIO_PASSWORD": secrets.token_hex(12),
        "LABEL_STUDIO_USER_TOKEN": token,
        "LABEL_STUDIO_DISABLE_SIGNUP_WITHOUT_LINK": "true",
        "LABEL_STUDIO_BASE_DATA_DIR": str(data_dir),
        "LABEL_STUDIO_COLLECT_ANALYTICS": "false",  # no telemetry
        "LABEL_STUDIO_LATEST_VERSION_CHECK": "false",  # no call to pypi.org
        "SENTRY_DSN": "",
        "FRONTEND_SENTRY_DSN": "",
    }
    log = tmp_path / "label-studio.log"
    command = [
        str(venv / "bin" / "label-studio"), "start", "--port", str(port), "--host", "127.0.0.1",
        "--internal-host", "127.0.0.1", "--no-browser", "--data-dir", str(data_dir),
        "--username", env["LABEL_STUDIO_USERNAME"], "--password", env["LABEL_STUDIO_PASSWORD"],
        "--user-token", token, "--enable-legacy-api-token",
    ]  # fmt: skip
    with log.open("wb") as log_file:
        process = subprocess.Popen(command, env=env, stdout=log_file, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        url = f"http://127.0.0.1:{port}"
        _wait_until_up(url, process, log)
        up_s = time.perf_counter() - started
        api = _LabelStudioAPI(url, token)
        config = config_path_for(tasks_path).read_text()
        project = api.call("POST", "/api/projects/", {"title": "curation round trip", "label_config": config})
        api.call("POST", f"/api/projects/{project['id']}/import", exported)
        listed = api.call("GET", f"/api/tasks/?project={project['id']}&page_size=100&fields=all")
        tasks = listed["tasks"] if isinstance(listed, dict) else listed
        assert len(tasks) == 6
        assert "validation failed" not in log.read_text(), log.read_text()[-3000:]  # predictions all accepted
        by_doc = {t["data"]["doc_id"]: t for t in tasks}
        predicted = {t["data"]["doc_id"]: t["predictions"][0]["result"] for t in exported}
        for doc_id, task in by_doc.items():  # what the annotators see: the exported spans, as predictions
            assert _triples(task["predictions"][0]["result"]) == _triples(predicted[doc_id]), doc_id
        docs = sorted(by_doc)
        results = {doc_id: predicted[doc_id] for doc_id in docs[:5]}  # accept the predictions as they are
        changed = docs[0]  # ... except one span: a word the detection missed, labeled ORGANIZATION
        word = re.search(r"[A-Za-z]{4,}", by_doc[changed]["data"]["text"])
        extra = {"start": word.start(), "end": word.end(), "text": word.group(), "labels": ["ORGANIZATION"]}
        results[changed] = [
            r for r in predicted[changed] if r["value"]["end"] <= word.start() or r["value"]["start"] >= word.end()
        ] + [{"from_name": "label", "to_name": "text", "type": "labels", "value": extra}]
        for doc_id in docs[:5]:
            api.call("POST", f"/api/tasks/{by_doc[doc_id]['id']}/annotations/", {"result": predicted[doc_id]})
        api.call("POST", f"/api/tasks/{by_doc[changed]['id']}/annotations/", {"result": results[changed]})  # latest
        api.call("POST", f"/api/tasks/{by_doc[docs[5]]['id']}/annotations/", {"result": [], "was_cancelled": True})
        export = api.call("GET", f"/api/projects/{project['id']}/export?exportType=JSON")
        export_path = tmp_path / "export.json"
        export_path.write_text(json.dumps(export))
        out = tmp_path / "support.jsonl"
        assert main(["label", "import", str(export_path), "--out", str(out), "--domain", "support"]) == 0
        records = {r.id: r for r in load_labeled(out)}
        assert sorted(records) == docs[:5]  # the skipped (cancelled) task is no labeled record
        for doc_id, result in results.items():
            spans = merge(Span(r["value"]["start"], r["value"]["end"], r["value"]["labels"][0]) for r in result)
            assert [(s.start, s.end, s.label) for s in records[doc_id].spans] == [
                (s.start, s.end, s.label) for s in spans
            ], doc_id
            assert records[doc_id].text == by_doc[doc_id]["data"]["text"]
        assert _mode(out) == 0o600
    finally:
        try:
            os.killpg(process.pid, signal.SIGTERM)
            process.wait(timeout=30)
        except ProcessLookupError:
            pass
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=30)
    print(f"\nexport {exported_s:.0f}s, Label Studio up at {up_s:.0f}s, total {time.perf_counter() - started:.0f}s")


def test_export_cli_refuses_bad_arguments_before_loading_a_model(tmp_path, capsys):
    corpus = tmp_path / "in.jsonl"
    corpus.write_text(json.dumps({"id": "a", "text": "hello"}) + "\n")
    out = tmp_path / "tasks.json"
    assert main(["label", "export", str(corpus), "--n", "0", "--out", str(out)]) == 2
    assert "--n must be at least 1" in capsys.readouterr().err
    assert main(["label", "export", str(corpus), "--n", "3", "--out", str(out), "--domain", "court"]) == 2
    assert "--domain 'court' is not one of the --calibrate-on domains" in capsys.readouterr().err
    assert not out.exists()


def test_labeled_records_are_not_picked_again(tmp_path):
    """Rounds (#34): a record already labeled, by its id or by the same text under another id, is no
    candidate; the count of those left out is reported."""
    labeled = tmp_path / "round1.jsonl"
    labeled.write_text(
        json.dumps({"id": "a", "text": "hello Dana", "spans": [{"start": 6, "end": 10, "label": "PERSON"}]})
        + "\n"
        + json.dumps({"id": "x9", "text": "call Ilse at noon", "spans": []})
        + "\n"
    )
    pool = [Candidate("a", "hello Dana"), Candidate("b", "call Ilse at noon"), Candidate("c", "new post")]
    kept, excluded = without_labeled(pool, [labeled], None)
    assert [c.doc_id for c in kept] == ["c"] and excluded == 2
    assert without_labeled(pool, [], None) == (pool, 0)


def test_export_cli_says_when_every_record_is_labeled_already(tmp_path, capsys):
    corpus = tmp_path / "in.jsonl"
    corpus.write_text(json.dumps({"id": "a", "text": "hello Dana"}) + "\n")
    labeled = tmp_path / "labeled.jsonl"
    labeled.write_text(json.dumps({"id": "a", "text": "hello Dana", "spans": []}) + "\n")
    out = tmp_path / "tasks.json"
    assert main(["label", "export", str(corpus), "--n", "3", "--out", str(out), "--exclude", str(labeled)]) == 2
    assert "every record is labeled already" in capsys.readouterr().err
    assert not out.exists()
