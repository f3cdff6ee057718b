"""corpus.papers.fields: every arXiv category maps to one CiteWorth field and one field of study."""

from __future__ import annotations

import json
import re

import pytest

from corpus.papers.fields import (
    ARCHIVES,
    CITEWORTH_FIELDS,
    RETIRED,
    TAXONOMY,
    UnknownCategory,
    canonical_category,
    category_name,
    citeworth_field,
    field_of_study,
)

MAG_LEVEL0 = set(CITEWORTH_FIELDS) | {"Business", "Geology", "Environmental Science"}


def test_table_is_complete_and_closed():
    assert len(TAXONOMY) >= 175
    for code, (name, cw, fos) in TAXONOMY.items():
        assert name, code
        assert cw in CITEWORTH_FIELDS, code
        assert fos in MAG_LEVEL0, code
    # every one of the 10 fields can be reached from some arXiv category
    assert {cw for _, cw, _ in TAXONOMY.values()} == set(CITEWORTH_FIELDS)
    # archive counts of the current taxonomy
    count = lambda prefix: sum(c.startswith(prefix) for c in TAXONOMY)  # noqa: E731
    assert count("cs.") == 40
    assert count("math.") == 32
    assert count("physics.") == 22
    assert count("q-bio.") == 10 and count("q-fin.") == 9 and count("stat.") == 6
    assert count("astro-ph.") == 6 and count("cond-mat.") == 9 and count("nlin.") == 5
    assert count("eess.") == 4 and count("econ.") == 3


@pytest.mark.parametrize(
    ("cats", "cw", "fos"),
    [
        (["cs.CL", "cs.LG"], "Computer Science", "Computer Science"),
        (["cond-mat.mtrl-sci"], "Materials Science", "Materials Science"),
        (["physics.chem-ph", "cond-mat.soft"], "Chemistry", "Chemistry"),
        (["physics.med-ph"], "Medicine", "Medicine"),
        (["q-bio.TO"], "Medicine", "Medicine"),
        (["q-bio.NC"], "Psychology", "Biology"),
        (["q-bio.PE"], "Biology", "Biology"),
        (["q-fin.GN"], "Economics", "Business"),
        (["q-fin.ST"], "Economics", "Economics"),
        (["econ.EM"], "Economics", "Economics"),
        (["eess.SP"], "Engineering", "Engineering"),
        (["cs.SY"], "Engineering", "Engineering"),
        (["stat.ML", "stat.TH"], "Computer Science", "Computer Science"),
        (["stat.ME"], "Mathematics", "Mathematics"),
        (["math.ST"], "Mathematics", "Mathematics"),
        (["math.IT"], "Computer Science", "Computer Science"),
        (["math.MP"], "Physics", "Physics"),
        (["math-ph"], "Physics", "Physics"),
        (["physics.geo-ph"], "Physics", "Geology"),
        (["physics.ao-ph"], "Physics", "Environmental Science"),
        (["hep-th", "math.AG"], "Physics", "Physics"),  # the primary wins
        (["math.AG", "hep-th"], "Mathematics", "Mathematics"),
        ("astro-ph.GA astro-ph.CO", "Physics", "Physics"),  # arXiv's space-separated string
        (["astro-ph"], "Physics", "Physics"),  # pre-2009 bare archive
    ],
)
def test_documented_choices(cats, cw, fos):
    assert citeworth_field(cats) == cw
    assert field_of_study(cats) == fos


def test_retired_archives_follow_their_successor():
    for old, new in RETIRED.items():
        assert TAXONOMY[old][1:] == TAXONOMY[new][1:], old
    assert citeworth_field(["alg-geom"]) == "Mathematics"
    assert citeworth_field(["chao-dyn"]) == "Physics"
    assert citeworth_field(["cmp-lg"]) == "Computer Science"
    assert citeworth_field(["mtrl-th"]) == "Materials Science"
    assert citeworth_field(["chem-ph"]) == "Chemistry"


def test_fallbacks():
    # a category arXiv adds after this table falls back to its archive
    assert citeworth_field(["cs.QZ"]) == "Computer Science"
    assert citeworth_field(["q-bio.ZZ"]) == "Biology"
    # an unknown primary falls back to the next category
    assert citeworth_field(["nonsense", "q-fin.PR"]) == "Economics"
    # OAI set specs and oai_dc subject names
    assert citeworth_field(["physics:cond-mat"]) == "Physics"
    assert citeworth_field(["physics:quant-ph"]) == "Physics"
    assert citeworth_field(["Condensed Matter - Materials Science"]) == "Materials Science"
    assert citeworth_field(["Computer Science - Learning"]) == "Computer Science"  # an old name
    assert canonical_category("Quantitative Biology - Neurons and Cognition") == "q-bio.NC"
    assert category_name("cs.CL") == "Computation and Language"
    with pytest.raises(UnknownCategory, match="nonsense"):
        citeworth_field(["nonsense", "foo.BAR"])
    with pytest.raises(UnknownCategory):
        field_of_study([])


def test_real_categories_all_map(shared_data, shared_landing):
    """Every category in the real metadata (Kaggle snapshot, landing OAI) is known exactly."""
    cats: set[str] = set()
    snap = shared_data / "arxiv_metadata_snapshot" / "arxiv-metadata-oai-snapshot.json"
    primaries = []
    for line in snap.read_text().splitlines():
        rec = json.loads(line)
        cats.update(rec["categories"].split())
        primaries.append(rec["categories"].split()[0])
    for xml in sorted((shared_landing / "oai").glob("*.xml")):
        for m in re.finditer(r"<categories>([^<]*)</categories>", xml.read_text()):
            cats.update(m.group(1).split())
    assert len(cats) > 40
    unknown = sorted(c for c in cats if canonical_category(c) is None)
    assert unknown == []
    counts = {f: sum(citeworth_field([p]) == f for p in primaries) for f in CITEWORTH_FIELDS}
    assert sum(counts.values()) == 200
    assert counts["Physics"] > counts["Computer Science"] > 0


def test_real_oai_dc_subjects_and_sets_map(shared_data):
    page = (shared_data / "oai_pmh" / "cos_scrapi" / "arxiv_oai_dc_ListRecords_2014-12-24.xml").read_text()
    subjects = set(re.findall(r"<dc:subject>([^<]*)</dc:subject>", page))
    sets = set(re.findall(r"<setSpec>([^<]*)</setSpec>", page))
    arxiv_subjects = {s for s in subjects if any(s.startswith(a[0]) for a in ARCHIVES.values())}
    assert len(arxiv_subjects) > 60
    assert [s for s in arxiv_subjects if canonical_category(s) is None] == []
    assert all(canonical_category(s) for s in sets)
    assert citeworth_field(["Physics - Chemical Physics"]) == "Chemistry"
