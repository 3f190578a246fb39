"""Imported once by the step executor's fork server (after `definitions`), so steps fork with the heavy
libraries already in memory instead of importing them each: measured here on top of `definitions`,
great_expectations 3.0 s (every contract check), presidio_analyzer + spaCy 5.3 s (detection, the
detector audit), torch 0.8 s and CredSweeper 1.2 s (scoring, tagging). Only imports: no model is loaded
and no thread is started before the fork. A library that is not installed is skipped (the step that needs
it reports that itself)."""

import importlib
import os
import warnings

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TLDEXTRACT_PUBLIC_SUFFIX_LIST_URLS", "")

PRELOADED = ("torch", "transformers", "great_expectations", "spacy", "presidio_analyzer", "credsweeper")

for _name in PRELOADED:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            importlib.import_module(_name)
    except ImportError:
        pass
