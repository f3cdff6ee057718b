"""Links by publication: link_references on real reference strings, the title-first order,
ambiguous publications, and citation_links on the real landing zone (incremental == definition,
days written before the publication columns still read)."""

from __future__ import annotations

import json

import dagster as dg
import polars as pl
import pytest

from corpus.graph.citation_links import ASSET, STATE_DIR, links_by_definition, read_links, update_links
from corpus.graph.linking import link_entries, link_entries_with_reasons
from corpus.graph.publication_links import link_references
from corpus.papers.bibliography import bib_frame, bib_rows
from corpus.papers.metadata import papers_frame
from corpus.papers.normalize import normalize_title
from corpus.store import Store

GOLD_ERRORS = {"10.1103/physrevd.98.030001", "10.2172/881537", "10.1186/1471-2148-4-18"}


@pytest.fixture(scope="module")
def snapshot(shared_data):
    """(arxiv_id, journal_ref, doi) of the 200 real papers of the Kaggle snapshot."""
    rows = []
    for line in (
        (shared_data / "arxiv_metadata_snapshot" / "arxiv-metadata-oai-snapshot.json")
        .read_text(encoding="utf-8")
        .splitlines()
    ):
        d = json.loads(line)
        rows.append((d["id"], d.get("journal-ref"), d.get("doi")))
    return rows


@pytest.fixture(scope="module")
def titleless(shared_data):
    return [
        json.loads(line)
        for line in (shared_data / "titleless" / "unarxive_2212_086_bib_entries.jsonl")
        .read_text(encoding="utf-8")
        .splitlines()
    ]


def test_real_references_link_to_their_papers_and_to_nothing_else(titleless, snapshot):
    """The 1,786 real strings against a corpus of the papers unarXive resolved them to (arXiv id
    and DOI, no journal-ref) and the 200 real snapshot papers: every link is the resolved paper
    (but for unarXive's known mistakes), and the APS/JHEP entries link by derived DOI."""
    gold = {}
    papers = list(snapshot)
    for r in titleless:
        ids = r["ids"] or {}
        if ids.get("arxiv_id"):
            gold.setdefault(ids["arxiv_id"], (ids.get("doi") or "").lower())
    doi_of = {a: d for a, d in gold.items() if d and not d.startswith("10.48550")}
    papers += [(a, None, doi_of.get(a)) for a in gold]
    refs = [r["bib_entry_raw"] for r in titleless]
    got = link_references(refs, papers)
    linked = wrong = 0
    for r, cited in zip(titleless, got, strict=True):
        if cited is None:
            continue
        linked += 1
        ids = r["ids"] or {}
        if ids.get("arxiv_id") is None and cited in r["bib_entry_raw"]:
            continue  # unarXive resolved nothing; the entry prints the id it links by
        if cited != ids.get("arxiv_id") and (ids.get("doi") or "").lower() not in GOLD_ERRORS:
            wrong += 1
    assert wrong == 0 and linked >= 65
    # without the arXiv ids and DOIs printed in them, entries to APS/JHEP papers still link
    stripped = [r["bib_entry_raw"].split("doi:")[0].split("[arXiv")[0].split("arXiv:")[0] for r in titleless]
    got = link_references(stripped, papers)
    derivable = [
        (r, c)
        for r, c in zip(titleless, got, strict=True)
        if (r["ids"] or {}).get("arxiv_id") in doi_of
        and doi_of[r["ids"]["arxiv_id"]].startswith(("10.1103/", "10.1088/1126-6708", "10.1007/jhep"))
    ]
    assert len(derivable) >= 25
    assert sum(c == r["ids"]["arxiv_id"] for r, c in derivable) >= 0.8 * len(derivable)
    assert all(c in (None, r["ids"]["arxiv_id"]) for r, c in derivable)


def test_journal_ref_styles_link_across_styles(snapshot):
    """References written in other styles than the real journal-refs they cite."""
    refs = [
        "C. Balazs et al., Phys. Rev. D 76, 013009 (2007).",  # Phys.Rev.D76:013009,2007
        "Phys. Rev. D76 (2007) 013009",
        "A. Author, JHEP 05 (2007) 034",  # JHEP 0705:034,2007
        "B. Author, J. High Energy Phys. 0812 (2008) 112",  # JHEP 0812:112,2008
        "C. Author, Nucl. Phys. A 800 (2008) 1",  # Nucl.Phys.A800:1-20,2008
        "D. Author, Mon. Not. R. Astron. Soc. 378, 211 (2007)",  # Mon.Not.Roy.Astron.Soc.378:211-220,2007
        "E. Author, Prog. Theor. Phys. 118, 715 (2007)",  # Prog.Theor.Phys.118:715-727,2007
        "F. Author, JHEP 05 (2011) 034",  # another year: not JHEP 0705:034
        "G. Author, Phys. Rev. B 76, 013009 (2007)",  # another journal
        "H. Author, Phys. Rev. D 76, 013009 (2012)",  # a year that does not fit
    ]
    got = link_references(refs, [(a, j, None) for a, j, _ in snapshot])  # journal-refs only
    by_ref = {j: a for a, j, _ in snapshot if j}
    assert got[:7] == [
        by_ref["Phys.Rev.D76:013009,2007"],
        by_ref["Phys.Rev.D76:013009,2007"],
        by_ref["JHEP 0705:034,2007"],
        by_ref["JHEP 0812:112,2008"],
        by_ref["Nucl.Phys.A800:1-20,2008"],
        by_ref["Mon.Not.Roy.Astron.Soc.378:211-220,2007"],
        by_ref["Prog.Theor.Phys.118:715-727,2007"],
    ]
    assert got[7:] == [None, None, None]


def test_an_ambiguous_publication_links_nothing_and_says_why(snapshot):
    jr, doi = "Phys.Rev.D76:013009,2007", "10.1103/PhysRevD.76.013009"
    refs = ["C. Balazs et al., Phys. Rev. D 76, 013009 (2007)."]
    assert link_references(refs, [("0704.0001", jr, None), ("0704.9999", jr, None)]) == [None]
    # a journal-ref and a DOI naming two different papers: ambiguous as well
    assert link_references(refs, [("0704.0001", jr, None), ("0704.9999", None, doi)]) == [None]
    # both on one paper: one link, by the derived DOI
    entries = pl.DataFrame({"entry_id": ["e"], "citing_id": ["2301.00001"], "arxiv_id": [None], "doi": [None],
                            "norm_title": [None], "pub_journal": ["Phys. Rev. D"], "pub_volume": ["76"],
                            "pub_page": ["013009"], "pub_year": ["2007"]})  # fmt: skip
    papers = pl.DataFrame({"paper_id": ["0704.0001", "0704.9999"], "doi": [doi, None], "norm_title": [None, None],
                           "journal_ref": [jr, None]})  # fmt: skip
    links, reasons = link_entries_with_reasons(entries, papers)
    assert links.select("cited_id", "via").rows() == [("0704.0001", "doi_derived")] and reasons.height == 0
    links, reasons = link_entries_with_reasons(entries, papers.with_columns(pl.lit(jr).alias("journal_ref")))
    assert links.height == 0 and reasons.rows() == [("e", "ambiguous_publication")]


def test_a_titled_entry_links_by_title_first(titleless):
    """An entry whose title matches one paper and whose publication names another links by title."""
    raw = next(
        r["bib_entry_raw"] for r in titleless if r["bib_entry_raw"].startswith("S. Godfrey and K. Moats")
    )
    raw = raw.split(" doi:")[0]  # its DOI and arXiv id would link it first
    (row,) = bib_rows("2212.11861", {"bib_entries": {"b0": {"ref_id": "b0", "raw_text": raw,
                                                            "title": "Properties of excited charm mesons"}}})  # fmt: skip
    assert (row["pub_journal"], row["pub_volume"], row["pub_page"]) == ("Phys. Rev. D", "93", "034035")
    entries = bib_frame([row])
    papers = pl.DataFrame({"paper_id": ["1510.08305", "1601.00001"],
                           "doi": ["10.1103/PhysRevD.93.034035", None],
                           "norm_title": [None, normalize_title("Properties of excited charm mesons")],
                           "journal_ref": ["Phys. Rev. D 93, 034035 (2016)", None]})  # fmt: skip
    links = link_entries(entries, papers)
    assert links.select("cited_id", "via").rows() == [("1601.00001", "title")]
    links = link_entries(entries.with_columns(pl.lit(None, pl.String).alias("norm_title")), papers)
    assert links.select("cited_id", "via").rows() == [("1510.08305", "doi_derived")]


QUIET = {"loggers": {"console": {"config": {"log_level": "ERROR"}}}}
DAYS = ["2007-04-01", "2007-04-02", "2007-04-09"]  # days of the landing zone's real 0704.* records
# References to those real papers (their journal-refs and DOIs are real) in other styles, one that
# only a DOI can reach (0704.0055 has no journal-ref), one to a paper not in the corpus
CITING = [
    ("b0", "A. Author, Phys. Rev. D 76, 053001 (2007)"),  # 0704.0032: Phys.Rev.D76:053001,2007
    ("b1", "B. Author, JHEP 06 (2007) 061"),  # 0704.0085: JHEP 0706:061,2007
    ("b2", "C. Author, ApJ 663, 573 (2007)"),  # 0704.0059: Astrophys.J.663:573-582,2007 (no DOI scheme)
    ("b3", "D. Author, Phys. Rev. B 76, 155425 (2007)"),  # 0704.0055: a DOI, no journal-ref
    ("b4", "E. Author, J. Math. Phys. 48, 092102 (2007)"),  # 0704.0046: J. Math. Phys. 48(2007), 092102.
    ("b5", "F. Author, Phys. Rev. D 77, 111111 (2008)"),  # nobody's
]


def _citing_day(store: Store, day: str, pid: str, with_pub: bool = True) -> None:
    entries = {k: {"ref_id": k, "raw_text": raw} for k, raw in CITING}
    rows = bib_rows(pid, {"bib_entries": entries})
    frame = bib_frame(rows)
    if not with_pub:  # a day written before the publication columns existed
        frame = frame.drop("pub_journal", "pub_volume", "pub_page", "pub_year")
    paper = {"id": pid, "title": "A paper citing by journal", "norm_title": "apapercitingbyjournal", "kept": True,
             "field_of_study": "Physics", "drop_reason": None}  # fmt: skip
    store.write_partition("papers", day, papers_frame([paper]))
    store.write_partition("bib_entries", day, frame)


@pytest.fixture(scope="module")
def landing_store(tmp_path_factory, shared_landing):
    from corpus_assets.definitions import defs
    from resources.arxiv import ArxivResource
    from resources.store import CorpusStore

    home = tmp_path_factory.mktemp("publinks") / "data"
    corpus = CorpusStore(home=str(home), landing=str(shared_landing))
    assets = [a for a in defs.assets if {k.path[0] for k in a.keys} & {"arxiv_metadata", "arxiv_pdfs",
              "arxiv_sources", "grobid_tei", "pdf_parses", "latex_parses", "papers", "bib_entries"}]  # fmt: skip
    resources = {**defs.resources, "corpus": corpus, "arxiv": ArxivResource(source="landing")}
    with dg.instance_for_test() as instance:
        for day in DAYS:
            assert dg.materialize(assets, partition_key=day, resources=resources, instance=instance,
                                  run_config=QUIET).success  # fmt: skip
    return Store(home)


@pytest.mark.slow
def test_citation_links_records_the_new_methods_on_the_real_landing_zone(landing_store):
    store = landing_store
    kept = pl.concat([store.read_partition("papers", d) for d in DAYS]).filter(pl.col("kept"))
    assert {"0704.0032", "0704.0085", "0704.0059", "0704.0055", "0704.0046"} <= set(kept["id"])
    assert update_links(store.home)["mode"] == "full"
    # a new day: a paper citing them by journal, volume and page
    _citing_day(store, "2023-01-02", "2301.00001")
    summary = update_links(store.home)
    assert summary["mode"] == "incremental"
    links = read_links(store)
    assert links.equals(links_by_definition(store.home))
    cited = {r["entry_id"]: (r["cited_id"], r["via"]) for r in links.iter_rows(named=True)}
    assert cited["2301.00001#b0"] == ("0704.0032", "doi_derived")  # journal-ref and DOI both name it
    assert cited["2301.00001#b1"] == ("0704.0085", "doi_derived")
    assert cited["2301.00001#b2"] == ("0704.0059", "publication")  # ApJ: no DOI scheme
    assert cited["2301.00001#b3"] == ("0704.0055", "doi_derived")  # a DOI and no journal-ref
    assert cited["2301.00001#b4"] == ("0704.0046", "publication")
    assert "2301.00001#b5" not in cited
    assert summary["via"]["publication"] == 2 and summary["via"]["doi_derived"] == 3
    physics = summary["by_field"]["Physics"]
    assert physics["entries"] == 6 and physics["publication"] == 2 and physics["doi_derived"] == 3
    # a day written before the publication columns, beside the new one: read with them null
    _citing_day(store, "2023-01-03", "2301.00002", with_pub=False)
    assert "pub_journal" not in store.read_partition("bib_entries", "2023-01-03").columns
    summary = update_links(store.home)
    assert summary["mode"] == "incremental"
    links = read_links(store)
    assert links.equals(links_by_definition(store.home))
    assert not links.filter(pl.col("citing_id") == "2301.00002").height  # nothing to link them by
    assert summary["by_field"]["Physics"]["entries"] == 12
    # and a full run over both gives the same links
    layout = store.asset_dir(ASSET) / STATE_DIR / "layout.json"  # as if made by other linking code
    layout.write_text(json.dumps({**json.loads(layout.read_text()), "code": "corpus.graph.linking/0"}))
    assert update_links(store.home)["mode"] == "full"
    assert read_links(store).equals(links)


def test_a_new_paper_with_the_same_publication_makes_an_old_link_ambiguous(tmp_path):
    """Incremental: a later paper naming the same publication unlinks the entry (ambiguous), and
    its leaving links it again, as a full run would."""
    store = Store(tmp_path)
    jr = "Astrophys.J.663:573-582,2007"  # 0704.0059, cited by "ApJ 663, 573 (2007)"

    def paper(pid, journal_ref=None, kept=True):
        return {"id": pid, "title": f"Paper {pid}", "norm_title": normalize_title(f"Paper {pid}"), "kept": kept,
                "journal_ref": journal_ref, "drop_reason": None if kept else "not_english"}  # fmt: skip

    store.write_partition("papers", "2023-01-01", papers_frame([paper("0704.0059", jr)]))
    store.write_partition("bib_entries", "2023-01-01", bib_frame([]))
    _citing_day(store, "2023-01-02", "2301.00001")
    update_links(tmp_path)
    assert read_links(store).filter(pl.col("via") == "publication")["cited_id"].to_list() == ["0704.0059"]
    store.write_partition("papers", "2023-01-03", papers_frame([paper("0704.9999", jr)]))
    store.write_partition("bib_entries", "2023-01-03", bib_frame([]))
    summary = update_links(tmp_path)
    assert summary["mode"] == "incremental" and "publication" not in summary["via"]
    assert summary["by_field"]["Physics"]["ambiguous_publication"] == 1
    assert read_links(store).equals(links_by_definition(tmp_path))
    store.write_partition("papers", "2023-01-04", papers_frame([paper("0704.9999", jr, kept=False)]))
    store.write_partition("bib_entries", "2023-01-04", bib_frame([]))
    summary = update_links(tmp_path)
    assert (
        summary["via"].get("publication") == 1
        and "ambiguous_publication" not in summary["by_field"]["Physics"]
    )
    assert read_links(store).equals(links_by_definition(tmp_path))


def test_link_references_is_also_reachable_from_the_package_without_loading_it_first():
    import subprocess
    import sys

    code = (
        "import sys, corpus; heavy = 'polars' in sys.modules\n"
        "from corpus import link_references\n"
        "from corpus.graph.publication_links import link_references as owner\n"
        "print(heavy, link_references is owner)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["False", "True"]
