"""corpus.ingest.eprint: real e-prints unpack and assemble; hostile ones fail per paper, in scratch only."""

from __future__ import annotations

import gzip
import io
import random
import re
import tarfile
from pathlib import Path

import pytest
from conftest import DATA, LANDING

from corpus.ingest.eprint import (
    EprintError,
    UnpackLimits,
    assemble_source,
    find_main_tex,
    load_eprint,
    strip_comments,
    unpack_eprint,
)

S2ORC_EPRINT = DATA / "latex_sources/s2orc-doc2json/1911.02782.gz"
SCIFACT_EPRINT = DATA / "latex_sources/s2orc-doc2json/2004.14974.gz"
DROP_EPRINT = LANDING / "src/2408.12714.tar.gz"


def _tree(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*")}


def _tar(members: list[tuple[tarfile.TarInfo, bytes | None]], compress: bool = True) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for info, data in members:
            if data is not None:
                info.size = len(data)
            tar.addfile(info, io.BytesIO(data) if data is not None else None)
    raw = buf.getvalue()
    return gzip.compress(raw, compresslevel=1) if compress else raw


def _file(name: str, data: bytes) -> tuple[tarfile.TarInfo, bytes]:
    return tarfile.TarInfo(name), data


def _link(name: str, target: str, hard: bool = False) -> tuple[tarfile.TarInfo, None]:
    info = tarfile.TarInfo(name)
    info.type = tarfile.LNKTYPE if hard else tarfile.SYMTYPE
    info.linkname = target
    return info, None


MAIN = b"\\documentclass{article}\n\\begin{document}\nHello.\n\\end{document}\n"


# ----------------------------------------------------------------------------- real e-prints


def test_s2orc_eprint_unpacks_and_finds_main(tmp_path: Path) -> None:
    scratch = tmp_path / "s"
    res = unpack_eprint(S2ORC_EPRINT, scratch)
    assert res.ok and res.kind == "tar"
    assert {"main.tex", "main.bbl", "acl2020.sty"} <= set(res.files)
    assert len(res.files) == 9 and res.bytes_written == 2_509_094
    main = find_main_tex(scratch)
    assert main == scratch / "main.tex"
    src = assemble_source(scratch, main)
    assert src.bbl is not None and src.bbl.count("\\bibitem") == 55
    assert "%" not in src.text.split("\\begin{document}")[1].replace("\\%", "")
    assert src.non_utf8 == [] and src.warnings == []


def test_scifact_multi_file_inputs_and_macos_junk(tmp_path: Path) -> None:
    scratch = tmp_path / "s"
    res = unpack_eprint(SCIFACT_EPRINT, scratch)
    assert res.ok
    junk = [s for s in res.skipped if s.endswith(": junk")]
    assert len(junk) >= 80  # every ._* AppleDouble file and .DS_Store
    assert not any(Path(f).name.startswith("._") for f in res.files)
    assert not list(scratch.rglob("._*"))
    main = find_main_tex(scratch)
    assert main is not None and main.name == "emnlp2020.tex"
    src = assemble_source(scratch, main)
    assert src.files[:4] == ["emnlp2020.tex", "commands.tex", "gww-chars.tex", "00-abstract.tex"]
    assert "figures/mesh-terms.tex" in src.files  # \input without extension
    assert "09-appendices.tex" not in src.files  # its \input is commented out
    assert "\\input" not in src.text
    assert "Fact-checking" in src.text and src.bbl and src.bbl.count("\\bibitem") == 36


def test_landing_eprint_prefers_paper_over_supplement(tmp_path: Path) -> None:
    scratch = tmp_path / "s"
    res, src, failure = load_eprint(DROP_EPRINT, scratch)
    assert failure is None and res.kind == "tar" and src is not None
    assert src.main == "ms.tex"
    assert src.bbl is not None and "\\bibitem{Josserand2016}" in src.bbl
    assert len(src.bib) == 1 and "@" in src.bib[0]


# ----------------------------------------------------------------------------- hostile e-prints


@pytest.mark.parametrize(
    ("members", "code"),
    [
        ([_file("main.tex", MAIN), _file("../evil.tex", b"x")], "unsafe_path"),
        ([_file("main.tex", MAIN), _file("a/../../evil.tex", b"x")], "unsafe_path"),
        ([_file("main.tex", MAIN), _link("up", "../../outside")], "unsafe_link"),
        ([_file("main.tex", MAIN), _link("abs", "/etc/passwd")], "unsafe_link"),
        ([_file("main.tex", MAIN), _link("hard", "/etc/passwd", hard=True)], "unsafe_link"),
        ([_file("main.tex", MAIN), _link("hard2", "../x", hard=True)], "unsafe_link"),
    ],
)
def test_escaping_members_fail_and_write_nothing_outside(tmp_path: Path, members, code: str) -> None:
    path = tmp_path / "in" / "paper.tar.gz"
    path.parent.mkdir()
    path.write_bytes(_tar(members))
    before = _tree(tmp_path)
    scratch = tmp_path / "work" / "scratch"
    res = unpack_eprint(path, scratch)
    assert res.failure is not None and res.failure.code == code, res
    assert _tree(tmp_path) - before == {"work", "work/scratch"}  # nothing but the (emptied) scratch dir
    assert not any(scratch.iterdir())


def test_absolute_member_path_fails(tmp_path: Path) -> None:
    target = tmp_path / "outside" / "pwned.tex"
    path = tmp_path / "abs.tar.gz"
    path.write_bytes(_tar([_file("main.tex", MAIN), _file(str(target), b"x")]))
    res = unpack_eprint(path, tmp_path / "scratch")
    assert res.failure is not None and res.failure.code == "unsafe_path"
    assert not target.exists() and not (tmp_path / "outside").exists()


def test_internal_links_are_skipped_and_flagged(tmp_path: Path) -> None:
    path = tmp_path / "ok.tar.gz"
    path.write_bytes(_tar([_file("main.tex", MAIN), _link("figs/alias.tex", "../main.tex")]))
    res = unpack_eprint(path, tmp_path / "s")
    assert res.ok and res.files == ["main.tex"] and res.skipped == ["figs/alias.tex: link"]
    assert not (tmp_path / "s" / "figs" / "alias.tex").exists()


def test_gzip_bomb_stops_at_the_cap(tmp_path: Path) -> None:
    path = tmp_path / "bomb.gz"
    with gzip.open(path, "wb", compresslevel=9) as fh:  # 64 MiB of zeros in ~64 kB
        block = b"\\x" + b"0" * (1 << 20)
        for _ in range(64):
            fh.write(block)
    assert path.stat().st_size < 1_000_000
    limits = UnpackLimits(max_total_bytes=8 << 20, max_file_bytes=4 << 20)
    res = unpack_eprint(path, tmp_path / "s", limits)
    assert res.kind == "gzip_tex" and res.failure is not None and res.failure.code == "too_large"
    assert not any((tmp_path / "s").iterdir())


def test_tar_member_declaring_huge_size_fails_before_reading(tmp_path: Path) -> None:
    info = tarfile.TarInfo("main.tex")
    info.size = 50 * 1024**3  # 50 GiB declared, no data behind it
    path = tmp_path / "huge.tar.gz"
    path.write_bytes(gzip.compress(info.tobuf(format=tarfile.GNU_FORMAT)))
    res = unpack_eprint(path, tmp_path / "s")
    assert res.failure is not None and res.failure.code == "too_large"


def test_hundred_thousand_tiny_files_hit_the_file_cap(tmp_path: Path) -> None:
    template = tarfile.TarInfo("d/f000000.tex")
    template.size = 1
    header = bytearray(template.tobuf(format=tarfile.USTAR_FORMAT))
    data_block = b"x" + b"\0" * 511
    parts = []
    for n in range(100_000):  # headers patched by hand: tarfile.addfile is too slow for 100k
        header[0:13] = f"d/f{n:06d}.tex".encode()
        header[148:156] = b" " * 8
        header[148:156] = b"%06o\0 " % sum(header)
        parts += (bytes(header), data_block)
    path = tmp_path / "many.tar"
    path.write_bytes(b"".join(parts) + b"\0" * 1024)
    with tarfile.open(path) as check:  # the archive is valid and really holds 100k files
        assert [check.next().name, check.next().name] == ["d/f000000.tex", "d/f000001.tex"]
    res = unpack_eprint(path, tmp_path / "s")
    assert res.failure is not None and res.failure.code == "too_many_files"
    assert "10000" in res.failure.message
    assert not any((tmp_path / "s").iterdir())


def test_pdf_only_and_gzipped_pdf(tmp_path: Path) -> None:
    pdf = b"%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n"
    (tmp_path / "a.pdf").write_bytes(pdf)
    (tmp_path / "b.gz").write_bytes(gzip.compress(pdf))
    for name in ("a.pdf", "b.gz"):
        res = unpack_eprint(tmp_path / name, tmp_path / f"s-{name}")
        assert res.kind == "pdf" and res.failure is not None and res.failure.code == "pdf_only"
        assert res.files == []


def test_empty_inputs(tmp_path: Path) -> None:
    (tmp_path / "empty.tar.gz").write_bytes(_tar([]))
    (tmp_path / "zero.gz").write_bytes(b"")
    (tmp_path / "dirs.tar.gz").write_bytes(_tar([(tarfile.TarInfo("./"), None)]))
    for name in ("empty.tar.gz", "zero.gz", "dirs.tar.gz"):
        res = unpack_eprint(tmp_path / name, tmp_path / f"s-{name}")
        assert res.failure is not None and res.failure.code == "empty", (name, res)


def test_corrupt_gzip(tmp_path: Path) -> None:
    data = gzip.compress(_tar([_file("main.tex", MAIN * 200)], compress=False))
    (tmp_path / "cut.gz").write_bytes(data[: len(data) // 2])
    res = unpack_eprint(tmp_path / "cut.gz", tmp_path / "s")
    assert res.failure is not None and res.failure.code == "corrupt"


def test_single_gzipped_tex_and_plain_tex(tmp_path: Path) -> None:
    (tmp_path / "one.gz").write_bytes(gzip.compress(MAIN))
    (tmp_path / "two.tex").write_bytes(MAIN)
    r1 = unpack_eprint(tmp_path / "one.gz", tmp_path / "s1")
    r2 = unpack_eprint(tmp_path / "two.tex", tmp_path / "s2")
    assert (r1.kind, r1.files, r2.kind, r2.files) == ("gzip_tex", ["main.tex"], "tex", ["main.tex"])
    assert find_main_tex(tmp_path / "s1") == tmp_path / "s1" / "main.tex"


def test_non_utf8_tex_is_decoded_as_latin1_and_flagged(tmp_path: Path) -> None:
    body = "\\documentclass{article}\n\\begin{document}\nCaf\xe9 na\xefve.\n\\end{document}\n"
    path = tmp_path / "latin.tar.gz"
    path.write_bytes(_tar([_file("paper.tex", body.encode("latin-1"))]))
    res, src, failure = load_eprint(path, tmp_path / "s")
    assert failure is None and src is not None
    assert src.non_utf8 == ["paper.tex"]
    assert "Café naïve." in src.text


def test_input_loop_and_depth(tmp_path: Path) -> None:
    loop = tmp_path / "loop"
    loop.mkdir()
    (loop / "main.tex").write_text("\\documentclass{article}\\begin{document}\\input{a}\\end{document}")
    (loop / "a.tex").write_text("A \\input{b}")
    (loop / "b.tex").write_text("B \\input{a.tex}")
    with pytest.raises(EprintError) as err:
        assemble_source(loop, loop / "main.tex")
    assert err.value.code == "input_loop" and "a.tex -> b.tex -> a.tex" in err.value.message

    deep = tmp_path / "deep"
    deep.mkdir()
    (deep / "main.tex").write_text("\\documentclass{article}\\begin{document}\\input{f0}\\end{document}")
    for n in range(30):
        (deep / f"f{n}.tex").write_text(f"level {n} \\input{{f{n + 1}}}")
    (deep / "f30.tex").write_text("bottom")
    with pytest.raises(EprintError) as err:
        assemble_source(deep, deep / "main.tex", max_depth=12)
    assert err.value.code == "input_depth"
    assert "bottom" in assemble_source(deep, deep / "main.tex", max_depth=40).text

    path = tmp_path / "loop.tar.gz"
    files = [_file(p.name, p.read_bytes()) for p in sorted(loop.iterdir())]
    path.write_bytes(_tar(files))
    _, src, failure = load_eprint(path, tmp_path / "s")
    assert src is None and failure is not None and failure.code == "input_loop"


def test_missing_input_is_a_warning(tmp_path: Path) -> None:
    (tmp_path / "main.tex").write_text(
        "\\documentclass{article}\\begin{document}\\input{nothere}x\\end{document}"
    )
    src = assemble_source(tmp_path, tmp_path / "main.tex")
    assert src.warnings == ["missing_input: nothere"]


def test_strip_comments_keeps_paragraph_breaks() -> None:
    assert strip_comments("a%c\nb") == "ab"
    assert strip_comments("a % c\n\nb") == "a \n\nb"
    assert strip_comments("x\n% whole line\ny") == "x\ny"
    assert strip_comments("50\\% off % note\nz") == "50\\% off z"
    assert strip_comments("line\\\\% c\nnext") == "line\\\\next"


# TeX's rule as one regex (a look-behind tried at every character): what strip_comments must equal.
_COMMENT_RULE = re.compile(r"(?<!\\)((?:\\\\)*)%[^\n]*(?:\n(?![ \t]*\n)[ \t]*)?")


def test_strip_comments_equals_the_rule_on_real_sources_and_random_text() -> None:
    def rule(text: str) -> str:
        return _COMMENT_RULE.sub(r"\1", text)

    files = [p for p in DATA.parent.rglob("*") if p.suffix in (".tex", ".sty", ".cls", ".bbl", ".bib")]
    assert len(files) > 40
    for path in files:
        text = path.read_bytes().decode("utf-8", "replace")
        assert strip_comments(text) == rule(text), path
    rng = random.Random(7)
    pieces = ["%", "\\", "\n", " ", "\t", "a", "\n\n", "\\%", "\\\\%"]
    for _ in range(20_000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 24)))
        assert strip_comments(text) == rule(text), repr(text)


def test_find_main_ignores_commented_documentclass(tmp_path: Path) -> None:
    (tmp_path / "old.tex").write_text("%\\documentclass{article}\n%\\begin{document}\n")
    (tmp_path / "real.tex").write_text(MAIN.decode())
    assert find_main_tex(tmp_path) == tmp_path / "real.tex"
    (tmp_path / "real.tex").unlink()
    assert find_main_tex(tmp_path) is None
