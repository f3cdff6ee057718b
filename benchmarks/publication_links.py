"""Links by publication (corpus.graph.publication_links.link_references): references per second and
peak memory against corpora of 10k, 50k and 200k papers; and its precision and recall on the real
title-less strings of ../shared.

    python benchmarks/publication_links.py [--sizes 10000,50000,200000] [--references 5000]
        [--skip-quality]

Speed. Each corpus is generated: every paper gets a publication in one of 24 physics journals
(volumes, pages and years as the journals print them: APS article numbers, JHEP year-month
volumes, page numbers elsewhere) and, as on arXiv, a journal-ref written in one of the styles
authors and INSPIRE use ("Phys.Rev.D76:013009,2007", "Phys. Rev. D 76, 013009 (2007)", "JHEP
0805:012,2008", "Nucl.Phys.B 800 (2008) 1-32", ...) for 60 %, an APS/JHEP DOI for 40 % of those
that have one, neither for 20 %. The references cite a random paper in another style (author list
first; 80 %) or a publication no paper has (20 %). Each size runs in a fresh child process
(its CPU s and peak RSS are its own: parsing the corpus's journal-refs included).

Quality (real data). The 1,786 real bibliography strings of ../shared/data/titleless are linked,
with the arXiv ids and DOIs printed in them removed (title-less and id-less, as the issue's
evaluation has them), against a corpus of the 200 real papers of the Kaggle snapshot plus the
papers unarXive resolved the strings to (their arXiv id; their DOI as unarXive found it;
journal-ref: none is known here, so only links through a derived DOI are possible on this side).
Precision: links to the resolved paper / links (unarXive's three known mistakes counted as
wrong). Recall: entries linked to their resolved paper / entries whose resolved paper has an APS,
JHEP or JCAP DOI (those a derived DOI can reach) and, separately, / all entries resolved to a
corpus paper.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
import time

from _common import SHARED, in_child, peak_mb, result

# (written in journal-refs, written in references, volume range, page style, first year)
JOURNALS = [
    ("Phys.Rev.D", "Phys. Rev. D", (40, 110), "aps", 1990),
    ("Phys.Rev.B", "Phys. Rev. B", (40, 110), "aps", 1990),
    ("Phys.Rev.A", "Phys. Rev. A", (40, 110), "aps", 1990),
    ("Phys.Rev.C", "Phys. Rev. C", (40, 110), "aps", 1990),
    ("Phys.Rev.E", "Phys. Rev. E", (50, 110), "aps", 1994),
    ("Phys.Rev.Lett.", "Phys. Rev. Lett.", (60, 130), "aps", 1990),
    ("JHEP", "JHEP", (0, 0), "jhep", 1997),
    ("JCAP", "JCAP", (0, 0), "jhep", 2003),
    ("Nucl.Phys.B", "Nucl. Phys. B", (300, 990), "page", 1990),
    ("Phys.Lett.B", "Phys. Lett. B", (230, 850), "page", 1990),
    ("Eur.Phys.J.C", "Eur. Phys. J. C", (1, 84), "page", 1998),
    ("Astrophys.J.", "ApJ", (350, 960), "page", 1990),
    ("Mon.Not.Roy.Astron.Soc.", "Mon. Not. R. Astron. Soc.", (240, 530), "page", 1990),
    ("Astron.Astrophys.", "A&A", (230, 680), "page", 1990),
    ("Class.Quant.Grav.", "Class. Quantum Grav.", (7, 41), "page", 1990),
    ("Commun.Math.Phys.", "Commun. Math. Phys.", (130, 405), "page", 1990),
    ("J.Math.Phys.", "J. Math. Phys.", (31, 65), "page", 1990),
    ("Int.J.Mod.Phys.A", "Int. J. Mod. Phys. A", (5, 39), "page", 1990),
    ("Mod.Phys.Lett.A", "Mod. Phys. Lett. A", (5, 39), "page", 1990),
    ("Prog.Theor.Phys.", "Prog. Theor. Phys.", (83, 128), "page", 1990),
    ("J.Phys.A", "J. Phys. A", (23, 57), "page", 1990),
    ("Annals Phys.", "Annals of Physics", (200, 460), "page", 1990),
    ("Rev.Mod.Phys.", "Rev. Mod. Phys.", (62, 96), "page", 1990),
    ("Nature", "Nature", (340, 620), "page", 1990),
]
APS = {"Phys.Rev.D": "PhysRevD", "Phys.Rev.B": "PhysRevB", "Phys.Rev.A": "PhysRevA", "Phys.Rev.C": "PhysRevC",
       "Phys.Rev.E": "PhysRevE", "Phys.Rev.Lett.": "PhysRevLett"}  # fmt: skip


def _publication(rng: random.Random) -> tuple:
    short, ref, (v0, v1), style, y0 = rng.choice(JOURNALS)
    year = rng.randint(y0, 2024)
    if style == "jhep":
        return (
            short,
            ref,
            f"{year % 100:02d}{rng.randint(1, 12):02d}",
            f"{rng.randint(1, 250):03d}",
            year,
            style,
        )
    volume = str(rng.randint(v0, v1))
    page = (
        f"{rng.randint(1, 29):02d}{rng.randint(0, 9999):04d}"
        if style == "aps" and year >= 2000
        else str(rng.randint(1, 9999))
    )
    return short, ref, volume, page, year, style


def _journal_ref(pub: tuple, rng: random.Random) -> str:
    short, ref, volume, page, year, style = pub
    if style == "jhep":
        return rng.choice([f"{short} {volume}:{page},{year}", f"{short} {volume[2:]} ({year}) {page}"])
    end = int(page) + rng.randint(5, 30) if page.isdigit() and len(page) < 6 else None
    pages = f"{page}-{end}" if end else page
    return rng.choice(
        [
            f"{short}{volume}:{pages},{year}",
            f"{ref} {volume}, {page} ({year})",
            f"{short} {volume} ({year}) {pages}",
            f"{ref} {volume} ({year}) {page}",
        ]
    )


def _reference(pub: tuple, rng: random.Random) -> str:
    short, ref, volume, page, year, style = pub
    authors = rng.choice(["A. Smith", "B. Jones and C. Wu", "D. Lee et al.", "E. Garcia, F. Chen and G. Kim"])
    if style == "jhep":
        return rng.choice(
            [f"{authors}, {ref} {volume[2:]} ({year}) {page}", f"{authors}, {ref} {volume}:{page},{year}"]
        )
    return rng.choice(
        [
            f"{authors}, {ref} {volume}, {page} ({year}).",
            f"{authors}, {ref} {volume} ({year}) {page}.",
            f"{authors}. {ref}, {volume}:{page}, {year}.",
            f"{authors}, {ref} {volume} ({year}), no. 3, {page}",
        ]
    )


def _doi(pub: tuple) -> str | None:
    short, _, volume, page, year, style = pub
    if short in APS:
        return f"10.1103/{APS[short]}.{volume}.{page}"
    if style == "jhep" and short == "JHEP":
        if year <= 2009:
            return f"10.1088/1126-6708/{year}/{volume[2:]}/{page}"
        return f"10.1007/JHEP{volume[2:]}({year}){page}"
    return None


def generate(n_papers: int, n_refs: int, seed: int = 0) -> tuple[list, list, list]:
    """(papers ``(arxiv_id, journal_ref, doi)``, references, the paper each reference cites)."""
    rng = random.Random(seed)
    pubs, papers, seen = [], [], set()
    while len(papers) < n_papers:
        pub = _publication(rng)
        if pub[:4] in seen:
            continue
        seen.add(pub[:4])
        r = rng.random()
        jr = _journal_ref(pub, rng) if r < 0.8 else None
        doi = _doi(pub) if (r < 0.6 and rng.random() < 0.4) or r >= 0.8 else None
        papers.append((f"{2000 + len(papers) // 100000:04d}.{len(papers) % 100000:05d}", jr, doi))
        pubs.append(pub)
    refs, truth = [], []
    for _ in range(n_refs):
        if rng.random() < 0.8:
            i = rng.randrange(n_papers)
            refs.append(_reference(pubs[i], rng))
            truth.append(papers[i][0] if papers[i][1] or papers[i][2] else None)
        else:
            pub = _publication(rng)
            refs.append(_reference(pub, rng))
            truth.append(None if pub[:4] not in seen else "?")
    return papers, refs, truth


def _speed(n_papers: int, n_refs: int, queue) -> None:
    from corpus.graph.publication_links import link_references

    papers, refs, truth = generate(n_papers, n_refs)
    start_cpu, start = time.process_time(), time.perf_counter()
    got = link_references(refs, papers)
    cpu, wall = time.process_time() - start_cpu, time.perf_counter() - start
    judged = [(g, t) for g, t in zip(got, truth, strict=True) if t != "?"]
    right = sum(g is not None and g == t for g, t in judged)
    linked = sum(g is not None for g, _ in judged)
    wanted = sum(t is not None for _, t in judged)
    queue.put({"cpu_s": cpu, "wall_s": wall, "peak_mb": peak_mb(), "precision": right / max(linked, 1),
               "recall": right / max(wanted, 1)})  # fmt: skip


def _strip_ids(text: str) -> str:
    """A reference without the identifiers printed in it (what a title-less, id-less entry is)."""
    text = re.sub(r"(?:doi:\s*|https?://\S+|\b10\.\d{4,9}/\S+)", " ", text, flags=re.I)
    text = re.sub(
        r"\[?arXiv:\s*\S+(?:\s*\[[\w.\-]+\])?\]?|\b[a-z\-]+(?:\.[A-Z]{2})?/\d{7}\b", " ", text, flags=re.I
    )
    return re.sub(r"\b\d{4}\.\d{4,5}(?:v\d+)?\b", " ", text)


def quality() -> dict:
    from corpus.graph.publication_links import link_references

    rows = [
        json.loads(line)
        for line in (SHARED / "data/titleless/unarxive_2212_086_bib_entries.jsonl").read_text().splitlines()
    ]
    papers = []
    for line in (
        (SHARED / "data/arxiv_metadata_snapshot/arxiv-metadata-oai-snapshot.json").read_text().splitlines()
    ):
        d = json.loads(line)
        papers.append((d["id"], d.get("journal-ref"), d.get("doi")))
    gold: dict[str, str] = {}
    for r in rows:
        ids = r["ids"] or {}
        if ids.get("arxiv_id"):
            gold.setdefault(ids["arxiv_id"], (ids.get("doi") or "").lower())
    doi_of = {a: d for a, d in gold.items() if d and not d.startswith("10.48550")}
    papers += [(a, None, doi_of.get(a)) for a in gold]
    start = time.perf_counter()
    got = link_references([_strip_ids(r["bib_entry_raw"]) for r in rows], papers)
    seconds = time.perf_counter() - start
    linked = right = reachable = reachable_right = in_corpus = 0
    for r, cited in zip(rows, got, strict=True):
        target = (r["ids"] or {}).get("arxiv_id")
        in_corpus += bool(target)
        if target and doi_of.get(target, "").startswith(
            ("10.1103/", "10.1088/1126-6708", "10.1007/jhep", "10.1088/1475-7516")
        ):
            reachable += 1
            reachable_right += cited == target
        if cited is not None:
            linked += 1
            right += cited == target
            if cited != target:
                print(f"  wrong: {cited} for {target}: {r['bib_entry_raw'][:120]}", file=sys.stderr)
    return {"q_refs": len(rows), "q_linked": linked, "q_precision": right / max(linked, 1),
            "q_recall_reachable": reachable_right / max(reachable, 1), "q_reachable": reachable,
            "q_recall_all": right / max(in_corpus, 1), "q_in_corpus": in_corpus, "q_s": seconds}  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="10000,50000,200000")
    ap.add_argument("--references", type=int, default=5000)
    ap.add_argument("--skip-quality", action="store_true")
    args = ap.parse_args()
    out: dict = {}
    if not args.skip_quality:
        q = quality()
        print(f"real title-less strings (ids removed): {q}", flush=True)
        out.update({k: q[k] for k in ("q_precision", "q_recall_reachable", "q_recall_all", "q_linked")})
    for n in [int(s) for s in args.sizes.split(",")]:
        r = in_child(_speed, n, args.references)
        rate = args.references / r["wall_s"]
        print(f"{n:>7} papers, {args.references} references: {r['wall_s']:.2f} s wall, {r['cpu_s']:.2f} CPU s, "
              f"{rate:,.0f} references/s, peak {r['peak_mb']:.0f} MB, precision {r['precision']:.4f}, "
              f"recall {r['recall']:.4f}", flush=True)  # fmt: skip
        k = f"{n // 1000}k"
        out.update({f"refs_per_s_{k}": rate, f"cpu_s_{k}": r["cpu_s"], f"peak_mb_{k}": r["peak_mb"],
                    f"precision_{k}": r["precision"], f"recall_{k}": r["recall"]})  # fmt: skip
    result(**out)


if __name__ == "__main__":
    main()
