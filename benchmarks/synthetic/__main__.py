"""``python -m benchmarks.synthetic``: write the bundled data sets (see ``cli``)."""

from benchmarks.synthetic.cli import main

raise SystemExit(main())
