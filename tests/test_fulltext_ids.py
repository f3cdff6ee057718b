"""arXiv ids in running text: every id form found, nothing inside DOIs or tables of numbers."""

from __future__ import annotations

import json
import tarfile

import pytest

from corpus.ingest.arxiv_ids import find_arxiv_ids, try_normalize

POSITIVE = [
    ("see arXiv:1806.01261v2 for details", "1806.01261", "arXiv:1806.01261v2"),
    ("arXiv preprint arXiv:1312.3005, 2013", "1312.3005", "arXiv:1312.3005"),
    ("arXiv: 0704.0001", "0704.0001", "arXiv: 0704.0001"),
    ("In [2212.11867], we", "2212.11867", "2212.11867"),  # 5 digits after 2014
    ("(1412.6980)", "1412.6980", "1412.6980"),  # 4 digits up to 1412
    ("https://arxiv.org/abs/2002.11768.", "2002.11768", "arxiv.org/abs/2002.11768"),
    ("http://arxiv.org/pdf/2101.00001v3.pdf", "2101.00001", "arxiv.org/pdf/2101.00001v3"),
    ("CoRR, abs/1503.05543, 2015", "1503.05543", "abs/1503.05543"),
    ("doi:10.48550/arXiv.2301.12345", "2301.12345", "arXiv.2301.12345"),
    ("hep-th/9901001", "hep-th/9901001", "hep-th/9901001"),
    ("[math.GT/0309136]", "math/0309136", "math.GT/0309136"),
    ("cond-mat.stat-mech/0501001v2;", "cond-mat/0501001", "cond-mat.stat-mech/0501001v2"),
    ("ARXIV:HEP-TH/9901001", "hep-th/9901001", "ARXIV:HEP-TH/9901001"),
    ("http://xxx.lanl.gov/abs/astro-ph/0001004", "astro-ph/0001004", "abs/astro-ph/0001004"),
]

NEGATIVE = [
    "doi 10.1145/1105.321114",  # inside a DOI
    "10.1103/PhysRevD.1105.3211",
    "Table 1203.4567",
    "see Fig. 1203.4567 and p. 1203.4567",
    "1203.4567 1305.2231 & 3.14",  # a row of numbers
    "12203.4567",  # longer number
    "1203.45678",  # 5 digits before 2015
    "1501.0001",  # 4 digits after 2014
    "0703.1234",  # before new-style ids began
    "9912.12345",  # from the future
    "1213.1234",  # month 13
    "arXiv:0704.0001v0",  # version 0
    "xhep-th/9901001",
    "hep-th/9913001",  # month 13
    "hep-th/0801001",  # old style ended March 2007
    "foo/9901001",  # not an archive
    "3.1415.9265",
]


@pytest.mark.parametrize(("text", "canonical", "span"), POSITIVE)
def test_positive(text, canonical, span):
    hits = find_arxiv_ids(text)
    assert [(c, text[s:e]) for c, s, e in hits] == [(canonical, span)]


@pytest.mark.parametrize("text", NEGATIVE)
def test_negative(text):
    assert find_arxiv_ids(text) == []


def test_several_in_order():
    text = "Cf. arXiv:1806.01261, hep-th/9901001 and abs/1503.05543."
    assert [c for c, _, _ in find_arxiv_ids(text)] == ["1806.01261", "hep-th/9901001", "1503.05543"]


def test_unarxive_bib_entries(shared_data):
    """Every id unarXive marked in its bib entries is found; every extra hit is a real id mention."""
    path = shared_data / "s2orc_family" / "unarXive" / "unarXive_data_sample.tar.gz"
    with tarfile.open(path) as tf:
        member = next(m for m in tf.getmembers() if m.name.endswith(".jsonl"))
        docs = [json.loads(line) for line in tf.extractfile(member)]
    gold_total = extra_total = 0
    for doc in docs:
        for bib in doc["bib_entries"].values():
            raw = bib["bib_entry_raw"]
            gold = {try_normalize(x["id"]) for x in bib["contained_arXiv_ids"]}
            hits = find_arxiv_ids(raw)
            got = {c for c, _, _ in hits}
            assert gold <= got, raw
            gold_total += len(gold)
            for c, s, e in hits:
                if c not in gold:
                    extra_total += 1
                    mention = raw[s:e].lower()
                    # unarXive misses "arXiv:"-prefixed and old-style ids; anything else would be noise
                    assert "arxiv" in mention or "abs/" in mention or "/" in c, raw
    assert gold_total >= 100 and extra_total >= 100
