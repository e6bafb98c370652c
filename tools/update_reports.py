"""Write the tables of results into the documents that show them (README.md and docs/*.md).

    python tools/update_reports.py

Each table sits between ``<!-- report NAME -->`` and ``<!-- end report -->`` and is what
``python -m kmt_ref report NAME`` prints (:func:`kmt_ref.reports.fill`); tests/test_reports.py fails
while a document holds another text there.
"""
from pathlib import Path

from kmt_ref.reports import fill

ROOT = Path(__file__).resolve().parents[1]


def documents():
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


if __name__ == "__main__":
    for path in documents():
        old = path.read_text(encoding="utf-8")
        new = fill(old)
        if new != old:
            path.write_text(new, encoding="utf-8")
            print(f"updated {path.relative_to(ROOT)}")
